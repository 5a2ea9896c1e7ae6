// Timers for one realm: setTimeout, setInterval and their clear functions on the global, and a
// control object only the host holds, which reports when the next timer is due and runs it.
// Delays follow Node: whole milliseconds from 1 to 2^31-1, anything else is 1. `touch()` tells
// the host that this run's timers need resetting when it ends.
(touch) => {
  'use strict';
  const perfNow = performance.now;
  const now = () => perfNow.call(performance);
  const MAX_DELAY = 2147483647;
  const MAX_PENDING = 10000;
  const pending = new Map();
  let nextId = 1;
  let order = 0;

  const delayOf = (ms) => {
    const n = Number(ms);
    return n >= 1 && n <= MAX_DELAY ? Math.trunc(n) : 1;
  };

  const schedule = (callback, ms, args, repeat) => {
    if (typeof callback !== 'function') {
      throw new TypeError('The "callback" argument must be of type function');
    }
    if (pending.size >= MAX_PENDING) {
      throw new RangeError(`too many pending timers (at most ${MAX_PENDING})`);
    }
    touch();
    const delay = delayOf(ms);
    const id = nextId++;
    pending.set(id, { callback, args, delay, repeat, due: now() + delay, order: order++ });
    return id;
  };

  /** The timer due first (by due time, then by creation), or undefined. */
  const earliest = () => {
    let first;
    for (const [id, t] of pending) {
      if (first === undefined || t.due < first[1].due || (t.due === first[1].due && t.order < first[1].order)) {
        first = [id, t];
      }
    }
    return first;
  };

  const globals = {
    setTimeout: function setTimeout(callback, ms, ...args) {
      return schedule(callback, ms, args, false);
    },
    setInterval: function setInterval(callback, ms, ...args) {
      return schedule(callback, ms, args, true);
    },
    clearTimeout: function clearTimeout(id) {
      pending.delete(id);
    },
    clearInterval: function clearInterval(id) {
      pending.delete(id);
    },
  };

  const control = {
    /** Forgets every pending timer and restarts the ids: a realm serving another run starts clean. */
    reset() {
      pending.clear();
      nextId = 1;
      order = 0;
    },
    /** Milliseconds until the next timer is due (0 or less: due now); -1 when none is pending. */
    nextDue() {
      const first = earliest();
      return first === undefined ? -1 : Math.max(0, first[1].due - now());
    },
    /** Runs the timer due first, if it is due; true when one ran. */
    fireNext() {
      const first = earliest();
      if (first === undefined || first[1].due > now()) return false;
      const [id, t] = first;
      if (t.repeat) {
        t.due = now() + t.delay;
        t.order = order++;
      } else {
        pending.delete(id);
      }
      t.callback(...t.args);
      return true;
    },
  };
  return { globals, control };
};
