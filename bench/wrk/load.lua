-- wrk script for `npm run bench` (bench/wrk-runner.ts sets the environment).
--   BENCH_MODE=publish: POST form publishes of BENCH_CONTENT_BYTES bytes over BENCH_TOPICS topics
--     named BENCH_TOPIC_PREFIX..i at BENCH_PATH; an answer counts as success only when it is a
--     200 with a "SUCCESS" SendResult body.
--   BENCH_MODE=batch: POST JSON bodies of BENCH_BATCH events each (rest/publishBatch at BENCH_PATH),
--     the events spread over the topics; success and failed count events, not requests: each
--     "status":"SUCCESS" result of an answer is one success, the rest of the batch failed.
--   BENCH_MODE=get: GET BENCH_PATH?eventId=… cycling over the ids in BENCH_IDS (lines "topic<TAB>id");
--     success is a 200 whose body holds "code":0.
-- BENCH_OUT (optional): where done() writes "topic<TAB>eventId" of every SUCCESS answer.
-- done() prints one line "BENCH-RESULT {json}" with counts, exact percentiles and a 200-point
-- quantile sketch (microseconds), so that runs against two gateways can be merged.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local function urlencode(s)
  return (string.gsub(s, "[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function init(args)
  local mode = os.getenv("BENCH_MODE") or "publish"
  local path = os.getenv("BENCH_PATH") or "/event-broker/rest/publish"
  prepared = {}
  if mode == "get" then
    wantBody = '"code":0'
    for line in io.lines(os.getenv("BENCH_IDS")) do
      local eventId = string.match(line, "\t(.+)$")
      if eventId then table.insert(prepared, wrk.format("GET", path .. "?eventId=" .. urlencode(eventId))) end
    end
  elseif mode == "batch" then
    wantBody = '"status":"SUCCESS"'
    batchSize = tonumber(os.getenv("BENCH_BATCH") or "100")
    local prefix = os.getenv("BENCH_TOPIC_PREFIX") or "bench/t"
    local n = tonumber(os.getenv("BENCH_TOPICS") or "16")
    local content = string.rep("x", tonumber(os.getenv("BENCH_CONTENT_BYTES") or "256"))
    local headers = { ["Content-Type"] = "application/json" }
    for i = 0, n - 1 do
      local events = {}
      for j = 0, batchSize - 1 do
        events[j + 1] = '{"topic":"' .. prefix .. ((i + j) % n) .. '","content":"' .. content .. '"}'
      end
      table.insert(prepared, wrk.format("POST", path, headers, '{"events":[' .. table.concat(events, ",") .. ']}'))
    end
  else
    wantBody = '"status":"SUCCESS"'
    local prefix = os.getenv("BENCH_TOPIC_PREFIX") or "bench/t"
    local n = tonumber(os.getenv("BENCH_TOPICS") or "16")
    local content = string.rep("x", tonumber(os.getenv("BENCH_CONTENT_BYTES") or "256"))
    local headers = { ["Content-Type"] = "application/x-www-form-urlencoded" }
    for i = 0, n - 1 do
      local body = "topic=" .. urlencode(prefix .. i) .. "&content=" .. content
      table.insert(prepared, wrk.format("POST", path, headers, body))
    end
  end
  nextIndex = id or 0
  success = 0
  failed = 0
  failSample = ""
  keep = os.getenv("BENCH_OUT") ~= nil and (mode == "publish" or mode == "batch")
  batched = mode == "batch"
  ids = {}
  idCount = 0
end

function request()
  nextIndex = nextIndex % #prepared + 1
  return prepared[nextIndex]
end

local function batchResponse(status, body)
  local ok = 0
  if status == 200 then
    for topic, eventId in string.gmatch(body, '"status":"SUCCESS","topic":"([^"]*)","eventId":"([^"]*)"') do
      ok = ok + 1
      if keep then
        idCount = idCount + 1
        ids[idCount] = topic .. "\t" .. eventId
      end
    end
  end
  success = success + ok
  if ok < batchSize then
    failed = failed + batchSize - ok
    if failSample == "" then failSample = status .. " " .. string.sub(body or "", 1, 200) end
  end
end

function response(status, headers, body)
  if batched then return batchResponse(status, body) end
  if status == 200 and string.find(body, wantBody, 1, true) then
    success = success + 1
    if keep then
      idCount = idCount + 1
      ids[idCount] = (string.match(body, '"topic":"([^"]*)"') or "") .. "\t" .. (string.match(body, '"eventId":"([^"]*)"') or "")
    end
  else
    failed = failed + 1
    if failSample == "" then failSample = status .. " " .. string.sub(body or "", 1, 200) end
  end
end

local function jsonString(s)
  return '"' .. string.gsub(s, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end) .. '"'
end

function done(summary, latency, requests)
  local ok, bad, sample = 0, 0, ""
  local out = os.getenv("BENCH_OUT")
  local file = out and io.open(out, "w")
  for _, t in ipairs(threads) do
    ok = ok + t:get("success")
    bad = bad + t:get("failed")
    if sample == "" then sample = t:get("failSample") end
    if file then
      local list = t:get("ids")
      for i = 1, t:get("idCount") do file:write(list[i], "\n") end
    end
  end
  if file then file:close() end
  local q = {}
  for i = 1, 200 do q[i] = latency:percentile(i / 2) end
  local e = summary.errors
  io.write("BENCH-RESULT {",
    '"requests":', summary.requests, ',"durationUs":', summary.duration,
    ',"success":', ok, ',"failed":', bad, ',"failSample":', jsonString(sample),
    ',"errors":{"connect":', e.connect, ',"read":', e.read, ',"write":', e.write,
    ',"status":', e.status, ',"timeout":', e.timeout, '}',
    ',"latencyUs":{"p50":', latency:percentile(50), ',"p90":', latency:percentile(90),
    ',"p99":', latency:percentile(99), ',"max":', latency.max, '}',
    ',"sketchUs":[', table.concat(q, ","), ']}\n')
end
