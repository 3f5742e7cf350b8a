//! Subscription prefix tries.
//!
//! - [`PipeTrie`] (PUB/XPUB side): topic -> set of pipes subscribed to it.
//!   As in libzmq, a pipe is subscribed to a topic or not (a repeated
//!   subscription from the same pipe is idempotent): a libzmq SUB sends every
//!   SUBSCRIBE upstream but a CANCEL only when its own count drops to zero,
//!   so counting per pipe here would leak subscriptions.
//! - [`CountedTrie`] (SUB/XSUB side): topic -> number of times subscribed;
//!   subscribing "A" twice needs two unsubscriptions.
//!
//! Matching a message walks the trie along the message's first frame once
//! (O(length of the frame)), collecting every node on the path: each such
//! node is a subscription that is a prefix of the frame. The empty topic is
//! the root, so it matches everything.

use crate::channel::pipes::PipeId;

/// The payload of a trie node.
pub(crate) trait NodeValue: Default {
    fn is_empty(&self) -> bool;
}

impl NodeValue for u32 {
    fn is_empty(&self) -> bool {
        *self == 0
    }
}

impl NodeValue for Vec<PipeId> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

/// One byte-labelled node; children are kept sorted by label.
struct Node<V> {
    value: V,
    labels: Vec<u8>,
    kids: Vec<Node<V>>,
}

impl<V: NodeValue> Node<V> {
    fn new() -> Node<V> {
        Node { value: V::default(), labels: Vec::new(), kids: Vec::new() }
    }

    #[inline]
    fn child(&self, b: u8) -> Option<&Node<V>> {
        // Few children per node in practice; binary search handles wide fan-out.
        match self.labels.binary_search(&b) {
            Ok(i) => Some(&self.kids[i]),
            Err(_) => None,
        }
    }

    fn is_useless(&self) -> bool {
        self.value.is_empty() && self.kids.is_empty()
    }

    fn entry(&mut self, key: &[u8]) -> &mut V {
        let mut node = self;
        for &b in key {
            let i = match node.labels.binary_search(&b) {
                Ok(i) => i,
                Err(i) => {
                    node.labels.insert(i, b);
                    node.kids.insert(i, Node::new());
                    i
                }
            };
            node = &mut node.kids[i];
        }
        &mut node.value
    }

    /// Apply `f` to the value at `key` (if the node exists) and prune nodes
    /// left without value and children.
    fn modify<R>(&mut self, key: &[u8], f: impl FnOnce(&mut V) -> R) -> Option<R> {
        match key.split_first() {
            None => Some(f(&mut self.value)),
            Some((&b, rest)) => {
                let i = self.labels.binary_search(&b).ok()?;
                let r = self.kids[i].modify(rest, f);
                if self.kids[i].is_useless() {
                    self.labels.remove(i);
                    self.kids.remove(i);
                }
                r
            }
        }
    }

    /// Visit every node (with its key), letting `f` modify it; prune afterwards.
    fn visit_mut(&mut self, key: &mut Vec<u8>, f: &mut impl FnMut(&[u8], &mut V)) {
        f(key, &mut self.value);
        let mut i = 0;
        while i < self.kids.len() {
            key.push(self.labels[i]);
            self.kids[i].visit_mut(key, f);
            key.pop();
            if self.kids[i].is_useless() {
                self.labels.remove(i);
                self.kids.remove(i);
            } else {
                i += 1;
            }
        }
    }

    fn visit(&self, key: &mut Vec<u8>, f: &mut impl FnMut(&[u8], &V)) {
        if !self.value.is_empty() {
            f(key, &self.value);
        }
        for (i, kid) in self.kids.iter().enumerate() {
            key.push(self.labels[i]);
            kid.visit(key, f);
            key.pop();
        }
    }
}

/// A prefix trie over byte strings.
struct Trie<V> {
    root: Node<V>,
}

impl<V: NodeValue> Trie<V> {
    fn new() -> Trie<V> {
        Trie { root: Node::new() }
    }

    /// Call `f` with the value of every node whose key is a prefix of `data`.
    #[inline]
    fn for_each_prefix(&self, data: &[u8], mut f: impl FnMut(&V) -> bool) {
        let mut node = &self.root;
        if !f(&node.value) {
            return;
        }
        for &b in data {
            if node.kids.is_empty() {
                return;
            }
            match node.child(b) {
                Some(n) => node = n,
                None => return,
            }
            if !f(&node.value) {
                return;
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.root.is_useless()
    }
}

/// PUB/XPUB subscriptions: topic -> pipes.
pub(crate) struct PipeTrie {
    trie: Trie<Vec<PipeId>>,
    scratch_key: Vec<u8>,
}

/// Outcome of [`PipeTrie::rm`] (libzmq's `rm_result`).
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum RmResult {
    /// The pipe was not subscribed to that topic.
    NotFound,
    /// The pipe was the topic's last subscriber.
    LastRemoved,
    /// Other pipes remain subscribed.
    ValuesRemain,
}

impl Default for PipeTrie {
    fn default() -> Self {
        PipeTrie { trie: Trie::new(), scratch_key: Vec::new() }
    }
}

impl PipeTrie {
    /// Subscribe `pipe` to `topic`. True iff the topic had no subscriber before.
    pub(crate) fn add(&mut self, topic: &[u8], pipe: PipeId) -> bool {
        let set = self.trie.root.entry(topic);
        let first = set.is_empty();
        if !set.contains(&pipe) {
            set.push(pipe);
        }
        first
    }

    /// Unsubscribe `pipe` from `topic`.
    pub(crate) fn rm(&mut self, topic: &[u8], pipe: PipeId) -> RmResult {
        self.trie
            .root
            .modify(topic, |set| match set.iter().position(|&p| p == pipe) {
                None => RmResult::NotFound,
                Some(i) => {
                    set.swap_remove(i);
                    if set.is_empty() {
                        RmResult::LastRemoved
                    } else {
                        RmResult::ValuesRemain
                    }
                }
            })
            .unwrap_or(RmResult::NotFound)
    }

    /// Remove every subscription of `pipe`; `f(topic, now_unsubscribed)` is
    /// called for each topic it had, `now_unsubscribed` telling whether the
    /// topic lost its last subscriber.
    pub(crate) fn rm_pipe(&mut self, pipe: PipeId, mut f: impl FnMut(&[u8], bool)) {
        let mut key = std::mem::take(&mut self.scratch_key);
        key.clear();
        self.trie.root.visit_mut(&mut key, &mut |k, set| {
            if let Some(i) = set.iter().position(|&p| p == pipe) {
                set.swap_remove(i);
                f(k, set.is_empty());
            }
        });
        self.scratch_key = key;
    }

    /// Call `f` for every pipe with a subscription that is a prefix of `data`
    /// (a pipe may be reported more than once).
    #[inline]
    pub(crate) fn match_pipes(&self, data: &[u8], mut f: impl FnMut(PipeId)) {
        self.trie.for_each_prefix(data, |set| {
            for &p in set {
                f(p);
            }
            true
        });
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.trie.is_empty()
    }

    /// Topics with at least one subscriber (ZMQ_TOPICS_COUNT).
    pub(crate) fn num_topics(&self) -> usize {
        let mut n = 0;
        let mut key = Vec::new();
        self.trie.root.visit(&mut key, &mut |_, set| n += !set.is_empty() as usize);
        n
    }
}

/// SUB/XSUB subscriptions: topic -> count.
pub(crate) struct CountedTrie {
    trie: Trie<u32>,
}

impl Default for CountedTrie {
    fn default() -> Self {
        CountedTrie { trie: Trie::new() }
    }
}

impl CountedTrie {
    /// Count one more subscription to `topic`; true iff it is the first.
    pub(crate) fn add(&mut self, topic: &[u8]) -> bool {
        let n = self.trie.root.entry(topic);
        *n += 1;
        *n == 1
    }

    /// Count one subscription less; true iff that was the last one
    /// (false also when there was none).
    pub(crate) fn rm(&mut self, topic: &[u8]) -> bool {
        self.trie
            .root
            .modify(topic, |n| {
                if *n == 0 {
                    return false;
                }
                *n -= 1;
                *n == 0
            })
            .unwrap_or(false)
    }

    /// Whether some subscription is a prefix of `data`.
    #[inline]
    pub(crate) fn matches(&self, data: &[u8]) -> bool {
        let mut found = false;
        self.trie.for_each_prefix(data, |n| {
            found = *n > 0;
            !found
        });
        found
    }

    /// Every subscribed topic, once each.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&[u8])) {
        let mut key = Vec::new();
        self.trie.root.visit(&mut key, &mut |k, _| f(k));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.trie.is_empty()
    }

    /// Subscribed topics (ZMQ_TOPICS_COUNT).
    pub(crate) fn num_topics(&self) -> usize {
        let mut n = 0;
        self.for_each(|_| n += 1);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matched(t: &PipeTrie, data: &[u8]) -> Vec<u32> {
        let mut v = Vec::new();
        t.match_pipes(data, |p| v.push(p.0));
        v.sort();
        v.dedup();
        v
    }

    #[test]
    fn pipe_trie_prefix_matching() {
        let mut t = PipeTrie::default();
        assert!(t.is_empty());
        assert!(t.add(b"A", PipeId(1)));
        assert!(!t.add(b"A", PipeId(2)));
        assert!(t.add(b"AB", PipeId(3)));
        assert!(t.add(b"B", PipeId(4)));
        assert_eq!(matched(&t, b"A"), vec![1, 2]);
        assert_eq!(matched(&t, b"ABC"), vec![1, 2, 3]);
        assert_eq!(matched(&t, b"B..."), vec![4]);
        assert_eq!(matched(&t, b""), Vec::<u32>::new());
        assert_eq!(matched(&t, b"C"), Vec::<u32>::new());
        // Empty topic matches everything.
        assert!(t.add(b"", PipeId(5)));
        assert_eq!(matched(&t, b""), vec![5]);
        assert_eq!(matched(&t, b"zzz"), vec![5]);
        assert_eq!(matched(&t, b"AB"), vec![1, 2, 3, 5]);
    }

    #[test]
    fn pipe_trie_set_semantics_and_removal() {
        let mut t = PipeTrie::default();
        assert!(t.add(b"topic", PipeId(1)));
        // A repeated subscription from the same pipe is idempotent (libzmq mtrie).
        assert!(!t.add(b"topic", PipeId(1)));
        assert!(!t.add(b"topic", PipeId(2)));
        assert_eq!(t.rm(b"topic", PipeId(1)), RmResult::ValuesRemain);
        assert_eq!(t.rm(b"topic", PipeId(1)), RmResult::NotFound);
        assert_eq!(t.rm(b"top", PipeId(2)), RmResult::NotFound);
        assert_eq!(t.rm(b"topicx", PipeId(2)), RmResult::NotFound);
        assert_eq!(t.rm(b"topic", PipeId(2)), RmResult::LastRemoved);
        assert!(t.is_empty(), "nodes are pruned");
    }

    #[test]
    fn pipe_trie_rm_pipe_reports_topics() {
        let mut t = PipeTrie::default();
        t.add(b"a", PipeId(1));
        t.add(b"ab", PipeId(1));
        t.add(b"ab", PipeId(2));
        t.add(b"", PipeId(1));
        let mut seen = Vec::new();
        t.rm_pipe(PipeId(1), |k, last| seen.push((k.to_vec(), last)));
        seen.sort();
        assert_eq!(seen, vec![(b"".to_vec(), true), (b"a".to_vec(), true), (b"ab".to_vec(), false)]);
        assert_eq!(matched(&t, b"abc"), vec![2]);
        assert_eq!(matched(&t, b"a"), Vec::<u32>::new());
        t.rm_pipe(PipeId(2), |_, _| {});
        assert!(t.is_empty());
    }

    #[test]
    fn counted_trie_counts() {
        let mut t = CountedTrie::default();
        assert!(!t.matches(b"A"));
        assert!(t.add(b"A"));
        assert!(!t.add(b"A"));
        assert!(t.matches(b"A"));
        assert!(t.matches(b"ABC"));
        assert!(!t.matches(b"B"));
        assert!(!t.matches(b""));
        assert!(!t.rm(b"A"));
        assert!(t.matches(b"AB"));
        assert!(t.rm(b"A"));
        assert!(!t.matches(b"AB"));
        assert!(!t.rm(b"A"), "nothing left to remove");
        assert!(t.is_empty());
    }

    #[test]
    fn counted_trie_empty_topic_and_listing() {
        let mut t = CountedTrie::default();
        t.add(b"");
        assert!(t.matches(b""));
        assert!(t.matches(b"anything"));
        t.add(b"x");
        t.add(b"xy");
        t.add(b"xy");
        let mut all = Vec::new();
        t.for_each(|k| all.push(k.to_vec()));
        all.sort();
        assert_eq!(all, vec![b"".to_vec(), b"x".to_vec(), b"xy".to_vec()]);
        assert!(t.rm(b""));
        assert!(!t.matches(b"abc"));
        assert!(t.matches(b"xyz"));
    }

    #[test]
    fn many_topics() {
        let mut t = PipeTrie::default();
        for i in 0..1000u32 {
            t.add(format!("topic.{i}").as_bytes(), PipeId(i % 7));
        }
        assert_eq!(matched(&t, b"topic.999"), vec![1, 2, 5], "topic.9, topic.99, topic.999");
        assert_eq!(matched(&t, b"topic.5x"), vec![5]);
        assert_eq!(matched(&t, b"topic.56"), vec![0, 5]);
        for i in 0..1000u32 {
            t.rm(format!("topic.{i}").as_bytes(), PipeId(i % 7));
        }
        assert!(t.is_empty());
    }
}
