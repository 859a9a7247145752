/**
 * Objects that live in the core behind a handle (streams, tool-call monitors, vector indexes): what
 * the TS side keeps of one, and the finalization that frees it when its owner is garbage-collected.
 * @module
 */
import { call } from './abi.js';
import { detectModule, type CoreExports, type SharedExports, type WasmModuleSlot } from './loader.js';

/** A core handle and the instance epoch it belongs to (a handle dies with its instance). */
export interface CoreSlot {
  handle: number;
  epoch: number;
}

/**
 * A FinalizationRegistry that frees a forgotten handle with `free` — unless the instance it
 * belonged to was replaced after a trap, in which case there is nothing left to free.
 */
export function handleRegistry<X extends SharedExports = CoreExports>(
  free: (x: X, handle: number) => void,
  module: WasmModuleSlot<X> = detectModule as unknown as WasmModuleSlot<X>,
): FinalizationRegistry<CoreSlot> {
  return new FinalizationRegistry<CoreSlot>((slot) => {
    try {
      if (slot.epoch === module.epoch()) call((x) => free(x, slot.handle), module);
    } catch {
      // The module is gone or was replaced; nothing to free.
    }
  });
}
