import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";

/** What every page shares: the selected group, every group, the refresh tick and what the gateway offers. */
export const Shell = createContext({ group: "1", groups: [], tick: 0, variant: "M", features: {}, refresh() {} });

export const useShell = () => useContext(Shell);

/**
 * Runs `load(signal)` when `deps` change and on every refresh tick. While the same deps reload,
 * the last data stays on screen (no flicker); new deps show "loading" until their data is in.
 * A failed reload keeps the last data and shows the error beside it. A tick that comes while a
 * load is still out does not abort it (on a slow gateway nothing would ever finish): it runs
 * once more when that load is done, so a refresh after a change never shows data from before.
 */
export function useLoad(load, deps) {
  const { tick } = useShell();
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key, data: undefined, error: null });
  const [again, setAgain] = useState(0);
  const flight = useRef(null);
  useEffect(() => {
    const out = flight.current;
    if (out && out.key === key) {
      out.stale = true;
      return;
    }
    out?.ctrl.abort();
    const mine = { key, ctrl: new AbortController(), stale: false };
    flight.current = mine;
    const { signal } = mine.ctrl;
    load(signal)
      .then(
        (data) => signal.aborted || setState({ key, data, error: null }),
        (error) => signal.aborted || setState((s) => ({ key, data: s.key === key ? s.data : undefined, error })),
      )
      .finally(() => {
        if (flight.current !== mine) return;
        flight.current = null;
        if (mine.stale) setAgain((n) => n + 1);
      });
  }, [key, tick, again]);
  useEffect(() => () => flight.current?.ctrl.abort(), []);
  return state.key === key ? state : { key, data: undefined, error: null };
}

/** The page and its parameters from the location hash, e.g. `#/blocks?page=3`. */
export function parseRoute(hash) {
  const [path, query = ""] = hash.replace(/^#\/?/, "").split("?");
  return { page: path || "overview", params: Object.fromEntries(new URLSearchParams(query)) };
}

export function routeHref(page, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== "")).toString();
  return `#/${page}${q ? `?${q}` : ""}`;
}

export function useRoute() {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

/** Navigates to a page; the current group stays in the location. */
export function go(page, params = {}) {
  location.hash = routeHref(page, params);
}

/**
 * A page's writes: `run(name, act, done)` runs one at a time (`busy` names it), then shows
 * `done(result)` or why it failed in `note`, and refreshes the page's data.
 */
export function useAction() {
  const { refresh } = useShell();
  const [busy, setBusy] = useState(null);
  const [note, setNote] = useState(null);
  const run = async (name, act, done) => {
    setBusy(name);
    setNote(null);
    try {
      setNote({ ok: true, text: done(await act()) });
    } catch (err) {
      setNote({ ok: false, text: `${name} failed: ${err.message}` });
    } finally {
      setBusy(null);
      refresh();
    }
  };
  return { busy, note, run };
}
