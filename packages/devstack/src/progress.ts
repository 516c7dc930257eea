/** Where long-running start-up work reports what it is doing. */
export type Progress = (message: string) => void;

export const consoleProgress: Progress = (message) => {
  process.stdout.write(`[stack] ${message}\n`);
};
