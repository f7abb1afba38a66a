//! Storage the caller chooses for the types whose size is set at run time
//! (window, breaker, sliding, shedder, pool, bloom).
//!
//! Such a type keeps its slots in a store `S`: anything that lends them as
//! a slice, [`Slots`]. Three stores fit without more code:
//!
//! - a `Vec<T>` (with the `alloc` feature): the default type parameter, so
//!   `Breaker` is `Breaker<Vec<BreakerTally>>` and its `new` allocates as
//!   before;
//! - a borrowed `&mut [T]`: a static array, a field of the caller's struct,
//!   memory a C caller handed over;
//! - an owned array `[T; N]`: a breaker over `[BreakerTally; 40]` holds its
//!   buckets inline, with no allocator at all.
//!
//! The store's length is the size: a `new_in` constructor takes the store,
//! overwrites every slot, and never grows or shrinks it. The pool and the
//! bloom size their store from their policy and shape instead
//! ([`crate::pool::store_len`], [`crate::bloom::BloomShape::lines`]):
//! their `new_in` asks for at least that many slots and leaves any after
//! them alone. The bloom's lines are atomic words, written through shared
//! references, so its store need only lend them (`AsRef<[BloomLine]>`,
//! which a shared `&[BloomLine]` does too). The same code runs whatever
//! the store; only where the slots live differs.
//!
//! [`BloomLine`]: crate::bloom::BloomLine

/// A fixed run of slots that a type reads and writes in place: any
/// `AsRef<[T]> + AsMut<[T]>` (a `Vec<T>`, a `&mut [T]`, a `[T; N]`).
pub trait Slots<T>: AsRef<[T]> + AsMut<[T]> {}

impl<T, S: AsRef<[T]> + AsMut<[T]> + ?Sized> Slots<T> for S {}
