import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";

/** What every page shares: the selected group, the refresh tick and what the gateway offers. */
export const Shell = createContext({ group: "1", tick: 0, variant: "M", features: {}, refresh() {} });

export const useShell = () => useContext(Shell);

/**
 * Runs `load(signal)` when `deps` change and on every refresh tick. While the same deps reload,
 * the last data stays on screen (no flicker); new deps show "loading" until their data is in.
 * A failed reload keeps the last data and shows the error beside it.
 */
export function useLoad(load, deps) {
  const { tick } = useShell();
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key, data: undefined, error: null });
  useEffect(() => {
    const ctrl = new AbortController();
    load(ctrl.signal).then(
      (data) => ctrl.signal.aborted || setState({ key, data, error: null }),
      (error) => ctrl.signal.aborted || setState((s) => ({ key, data: s.key === key ? s.data : undefined, error })),
    );
    return () => ctrl.abort();
  }, [key, tick]);
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
