//! Per-cell arrays with the largest board's capacity, indexed through a mask.
//!
//! Every padded cell index of every board size is below [`GRID`], so the mask never
//! changes an index, and the compiler can drop the bounds check it would otherwise emit at
//! each of the dozens of array reads a move makes (about a fifth of a light playout's time
//! on 19x19 went to them). Copies take only the prefix a board uses.

use std::ops::{Index, IndexMut};

use super::MAX_CELLS;

/// Capacity of every grid: the next power of two above the largest padded board.
pub(crate) const GRID: usize = MAX_CELLS.next_power_of_two();
const MASK: usize = GRID - 1;

#[derive(Debug)]
pub(crate) struct Grid<T>(Box<[T; GRID]>);

impl<T: Copy> Grid<T> {
    pub(crate) fn filled(v: T) -> Grid<T> {
        let cells: Box<[T]> = vec![v; GRID].into_boxed_slice();
        Grid(
            cells
                .try_into()
                .unwrap_or_else(|_| unreachable!("the vector has GRID items")),
        )
    }

    /// Copies the first `n` cells of `other`.
    #[inline]
    pub(crate) fn copy_prefix(&mut self, other: &Grid<T>, n: usize) {
        self.0[..n].copy_from_slice(&other.0[..n]);
    }

    /// Sets the first `n` cells to `v`.
    #[inline]
    pub(crate) fn fill_prefix(&mut self, v: T, n: usize) {
        self.0[..n].fill(v);
    }

    /// The first `n` cells.
    #[inline]
    pub(crate) fn prefix(&self, n: usize) -> &[T] {
        &self.0[..n]
    }

    #[inline]
    pub(crate) fn swap(&mut self, a: usize, b: usize) {
        self.0.swap(a & MASK, b & MASK);
    }
}

impl<T> Index<usize> for Grid<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, i: usize) -> &T {
        debug_assert!(i < GRID);
        &self.0[i & MASK]
    }
}

impl<T> IndexMut<usize> for Grid<T> {
    #[inline(always)]
    fn index_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < GRID);
        &mut self.0[i & MASK]
    }
}
