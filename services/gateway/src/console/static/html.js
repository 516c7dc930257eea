// htm bound to preact's h: JSX-like templates in plain modules, with no build step.
import htm from "htm";
import { h } from "preact";

export const html = htm.bind(h);
