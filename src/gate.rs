//! C face of [`weir_core::gate`].

use crate::guard::{free_handle, new_handle, on, Guarded, Handle};
use crate::status::weir_status;
use weir_core::gate::Gate;

/// A concurrency ceiling: at most `limit` calls inside at once. Lock-free and
/// safe to use from many threads at once; 24 bytes of heap per handle.
/// Made by `weir_gate_new`, freed by `weir_gate_free`.
pub struct weir_gate(Guarded<Gate>);

impl Handle for weir_gate {
    type State = Gate;
    fn guarded(&self) -> &Guarded<Gate> {
        &self.0
    }
}

/// Makes a gate that nothing has entered and writes it to `*out`. A `limit`
/// of zero or less means no ceiling. `WEIR_ERR_NULL` if `out` is NULL;
/// `*out` is written only on success.
#[no_mangle]
pub extern "C" fn weir_gate_new(limit: i64, out: *mut *mut weir_gate) -> weir_status {
    new_handle(out, || Ok(weir_gate(Guarded::new(Gate::new(limit)))))
}

/// Frees a gate. NULL is accepted and ignored.
#[no_mangle]
pub extern "C" fn weir_gate_free(gate: *mut weir_gate) {
    free_handle(gate)
}

/// Takes room if there is some. Returns whether it did; false for a NULL
/// gate.
#[no_mangle]
pub extern "C" fn weir_gate_enter(gate: *const weir_gate) -> bool {
    on(gate, false, Gate::enter)
}

/// Gives room back. Leaving more often than entering never takes the count
/// below zero. Does nothing for a NULL gate.
#[no_mangle]
pub extern "C" fn weir_gate_leave(gate: *const weir_gate) {
    on(gate, (), Gate::leave)
}

/// How many are inside now; 0 for a NULL gate.
#[no_mangle]
pub extern "C" fn weir_gate_held(gate: *const weir_gate) -> i64 {
    on(gate, 0, Gate::held)
}
