import { describe, expect, it } from 'vitest';
import { CallAbort, type AbortWatcher } from '../../src/api/call-abort.js';

function watcher(): AbortWatcher & { told: number } {
  return {
    told: 0,
    handleEvent() {
      this.told++;
    },
  };
}

describe('CallAbort', () => {
  it('tells the request watching it, once, then aborts its signal with the reason', () => {
    const call = new CallAbort();
    const w = watcher();
    call.watch(w);
    const signal = call.signal;
    const reason = new Error('deadline passed');
    call.abort(reason);
    call.abort(new Error('again'));
    expect(w.told).toBe(1);
    expect(call.aborted).toBe(true);
    expect(call.reason).toBe(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
  });

  it('does not tell a request that stopped watching, nor one that watched before another', () => {
    const call = new CallAbort();
    const ended = watcher();
    const earlier = watcher();
    const current = watcher();
    call.watch(ended);
    call.unwatch(ended);
    call.watch(earlier);
    call.watch(current);
    call.unwatch(earlier); // not the one watching: changes nothing
    call.abort(new Error('stopping'));
    expect([ended.told, earlier.told, current.told]).toEqual([0, 0, 1]);
  });

  it('makes its signal only when asked, already aborted when asked after the abort', () => {
    const call = new CallAbort();
    const reason = new Error('stopping');
    call.abort(reason);
    expect(call.signal.aborted).toBe(true);
    expect(call.signal.reason).toBe(reason);
    expect(call.signal).toBe(call.signal);
  });
});
