/**
 * The subcommands of `dedup`.
 * @module
 */
import { checkCommand } from './commands/check.js';
import { loopCommand } from './commands/loop.js';
import { guardCommand } from './commands/guard.js';
import { memoryCommand } from './commands/memory.js';

/** A subcommand: parses its own arguments, returns the exit code. */
export interface Command {
  summary: string;
  run(args: string[]): Promise<number>;
}

export const commands: Record<string, Command> = {
  loop: loopCommand,
  check: checkCommand,
  guard: guardCommand,
  memory: memoryCommand,
};

export function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  dedup ${name.padEnd(7)} ${c.summary}`);
  return `usage:\n${lines.join('\n')}\n`;
}
