import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it, vi } from "vitest";
import { type ChainRecord, chainRecordOf, chainTopicName, decodeChainRecord, type SealedBlock, silentLogger } from "@evb/domain";
import { ChainLogWriter, ChainTail, createKafka, LogInspector, platformaticProducer, readOffsetRanges } from "@evb/eventlog";
import { ChainRecorder } from "../services/indexer/src/chain-recorder.ts";

const identity = { clusterId: "c", topicId: "t" };

/** Block `height` of the ledger `fork` sealed: hashes `<fork><height>`, each on the one before. */
const block = (height: number, fork: string): SealedBlock =>
  ({
    groupId: "1",
    height,
    hash: `${fork}${height}`,
    prevHash: height === 1 ? "genesis" : `${fork}${height - 1}`,
    timestampMs: height,
    sealer: `0x${fork}`,
    sealerIndex: 0,
    events: [],
    ranges: [{ partition: 0, from: height, to: height }],
  }) as unknown as SealedBlock;

describe("the chain topic tail", () => {
  const kafka = createKafka({ brokers: inject("kafkaBrokers").split(","), clientId: "evb-test-chain-tail", logger: silentLogger });
  const prefix = `t${randomBytes(4).toString("hex")}.`;
  const topic = chainTopicName(prefix, "1");
  const writer = new ChainLogWriter(kafka);
  const tails: ChainTail[] = [];
  const tail = (freshMs?: number) => {
    const t = new ChainTail({
      kafka,
      topicPrefix: prefix,
      groups: ["1"],
      logger: silentLogger,
      ...(freshMs === undefined ? {} : { freshMs }),
    });
    tails.push(t);
    return t;
  };

  /** Every block record the chain topic holds, in order. */
  async function chainRecords(): Promise<ChainRecord[]> {
    const inspector = new LogInspector({ kafka });
    const [end] = await inspector.offsets(topic).finally(() => inspector.close());
    const read = await readOffsetRanges(kafka, topic, new Map([[0, { from: 0, to: (end?.high ?? 0) - 1 }]]));
    return (read.get(0) ?? []).flatMap((m) => decodeChainRecord(m.value) ?? []);
  }

  beforeAll(async () => {
    await writer.ensureTopics([topic], 1);
  });
  afterAll(async () => {
    for (const t of tails) await t.close();
    await writer.close();
  });

  // Fault survived: none by itself; an indexer that started on a chain topic whose last records are
  // opened topics (or junk) must still know the last block, and learn of blocks written after it.
  it("finds the last block record of a topic that ends with topic records, and follows new appends", async () => {
    await writer.write(
      topic,
      [1, 2, 3].map((h) => chainRecordOf(block(h, "a"), 1, identity)),
    );
    for (const name of ["x", "y"]) {
      await writer.writeTopic(topic, { v: 1, kind: "topic", groupId: "1", name, address: "0x1", creator: "0x2", createdAtMs: 1 });
    }
    const producer = platformaticProducer(kafka, "junk");
    await producer.start();
    await producer.send([{ topic, key: Buffer.from("9:zz"), value: Buffer.from("not json") }]);
    await producer.close();

    // Every call reads the topic's end afresh (by default a reading up to 100 ms old is shared).
    const t = tail(0);
    expect(await t.start(30_000)).toBe(true);
    const view = await t.current("1", 10_000);
    expect(view?.lastHeight).toBe(3);
    expect([...(view?.entries ?? [])].map(([h, e]) => `${h}:${e.hash}`)).toEqual(["1:a1", "2:a2", "3:a3"]);

    await writer.write(topic, [chainRecordOf(block(4, "a"), 1, identity)]);
    // Read to the topic's end as of the call: the block just written is known, no polling needed.
    const after = await t.current("1", 10_000);
    expect(after?.lastHeight).toBe(4);
    expect(after?.entries.get(4)?.hash).toBe("a4");
  });

  // Fault survived: a second ledger sealing on the same log (another deployment on this Kafka, or a
  // ledger restored and sealed on) writes its own block for a height the chain topic holds. Without
  // the check the topic would hold two records for the height, and the rebuild could not tell
  // which history the clients were given.
  it("refuses a record for a held height with another hash and writes nothing; the identical record may be written again", async () => {
    const recorder = (t: ChainTail, onRefuse: (g: string, reason: string) => void) =>
      new ChainRecorder({
        writer,
        store: { unwritten: async () => [], markWritten: async () => {} },
        tail: t,
        topicPrefix: prefix,
        logger: silentLogger,
        now: Date.now,
        onRefuse,
      });
    // The other ledger's indexer, with its own tail, started before the blocks above were written.
    const onRefuse = vi.fn();
    const other = recorder(tail(), onRefuse);
    const otherTail = tails.at(-1) as ChainTail;
    await otherTail.start(30_000);
    expect(await other.record(1, identity, [block(4, "b")])).toBe(false);
    expect(onRefuse).toHaveBeenCalledWith("1", expect.stringMatching(/^group 1: height 4 is a4 in the chain topic, b4 in this ledger/));
    const atFour = (await chainRecords()).filter((r) => r.height === 4);
    expect(atFour.map((r) => r.hash)).toEqual(["a4"]);

    // The ledger that wrote them re-writes a block it holds (after a failed write, say): allowed.
    const same = recorder(tails[0] as ChainTail, () => expect.fail("an identical record was refused"));
    expect(await same.record(1, identity, [block(4, "a"), block(5, "a")])).toBe(true);
    const after = await chainRecords();
    expect(after.filter((r) => r.height === 4).map((r) => r.hash)).toEqual(["a4", "a4"]);
    expect(after.at(-1)?.hash).toBe("a5");
    await other.close();
    await same.close();
  });
});
