//! An ordered array of pipes with O(1) position lookup, the building block of
//! the load balancer, fair queue and distributor. Those keep their pipes
//! partitioned into prefixes ("active first") and move a pipe between
//! partitions by swapping it with the pipe at a partition boundary.

use crate::channel::pipes::PipeId;

const ABSENT: u32 = u32::MAX;

#[derive(Default)]
pub(crate) struct PipeArray {
    items: Vec<PipeId>,
    /// Position of each pipe in `items`, indexed by `PipeId.0`.
    pos: Vec<u32>,
}

impl PipeArray {
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    #[inline]
    pub(crate) fn at(&self, i: usize) -> PipeId {
        self.items[i]
    }

    /// Position of `id`, if present.
    #[inline]
    pub(crate) fn index(&self, id: PipeId) -> Option<usize> {
        match self.pos.get(id.0 as usize) {
            Some(&p) if p != ABSENT => Some(p as usize),
            _ => None,
        }
    }

    /// Append `id` at the end (no-op if already present).
    pub(crate) fn push(&mut self, id: PipeId) {
        if self.index(id).is_some() {
            return;
        }
        let slot = id.0 as usize;
        if self.pos.len() <= slot {
            self.pos.resize(slot + 1, ABSENT);
        }
        self.pos[slot] = self.items.len() as u32;
        self.items.push(id);
    }

    #[inline]
    pub(crate) fn swap(&mut self, i: usize, j: usize) {
        if i == j {
            return;
        }
        self.items.swap(i, j);
        self.pos[self.items[i].0 as usize] = i as u32;
        self.pos[self.items[j].0 as usize] = j as u32;
    }

    /// Remove `id`, which must be in the last position's partition or the
    /// caller must have moved it there: it is swapped with the last item.
    pub(crate) fn remove(&mut self, id: PipeId) {
        let Some(i) = self.index(id) else { return };
        let last = self.items.len() - 1;
        self.swap(i, last);
        self.items.pop();
        self.pos[id.0 as usize] = ABSENT;
    }
}

/// Pipes taken in turn, the active ones first: `[0, active)` may be ready,
/// `[active, len)` wait for an activation. The load balancer and the fair
/// queue differ only in what "ready" means (room to write, data to read).
#[derive(Default)]
pub(crate) struct RoundRobin {
    pipes: PipeArray,
    active: usize,
    /// Whose turn it is, in `[0, active)` while any pipe is active.
    current: usize,
}

impl RoundRobin {
    /// A new pipe starts active: the first attempt on it tells.
    pub(crate) fn attach(&mut self, id: PipeId) {
        self.pipes.push(id);
        self.activate(id);
    }

    /// The pipe may be ready again.
    pub(crate) fn activate(&mut self, id: PipeId) {
        if let Some(i) = self.pipes.index(id) {
            if i >= self.active {
                self.pipes.swap(i, self.active);
                self.active += 1;
            }
        }
    }

    pub(crate) fn remove(&mut self, id: PipeId) {
        let Some(i) = self.pipes.index(id) else {
            return;
        };
        if i < self.active {
            self.deactivate_at(i);
        }
        self.pipes.remove(id);
    }

    /// The pipe whose turn it is, if any is active.
    #[inline]
    pub(crate) fn current(&self) -> Option<PipeId> {
        (self.active > 0).then(|| self.pipes.at(self.current))
    }

    /// The current pipe was served: the turn passes on.
    #[inline]
    pub(crate) fn advance(&mut self) {
        self.current += 1;
        if self.current >= self.active {
            self.current = 0;
        }
    }

    /// The current pipe cannot proceed: park it until it is activated.
    #[inline]
    pub(crate) fn deactivate_current(&mut self) {
        self.deactivate_at(self.current);
    }

    fn deactivate_at(&mut self, i: usize) {
        self.active -= 1;
        self.pipes.swap(i, self.active);
        if self.current >= self.active {
            self.current = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_swap_remove_keep_positions() {
        let mut a = PipeArray::default();
        for i in [3, 0, 7] {
            a.push(PipeId(i));
        }
        a.push(PipeId(0));
        assert_eq!(a.len(), 3);
        assert_eq!(a.index(PipeId(7)), Some(2));
        a.swap(0, 2);
        assert_eq!(a.at(0), PipeId(7));
        assert_eq!(a.index(PipeId(3)), Some(2));
        a.remove(PipeId(7));
        assert_eq!(a.len(), 2);
        assert_eq!(a.index(PipeId(7)), None);
        assert_eq!(a.index(PipeId(3)), Some(0));
        assert_eq!(a.index(PipeId(0)), Some(1));
        assert_eq!(a.index(PipeId(100)), None);
    }
}
