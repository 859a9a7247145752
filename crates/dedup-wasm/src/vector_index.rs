//! The vector index behind memory dedup: stable keys over [`Rows`], exact search while the set is
//! small, an [`Hnsw`] graph once it grows past `ann_threshold`, and the all-pairs queries that
//! `sweep()` and `compact()` need.

use crate::error::DedupError;
use crate::hash::DetMap;
use crate::hnsw::{Hnsw, HnswParams};
use crate::vector::{inverse_norm, unit, Query, Rows, TopK};

/// Settings of a [`VectorIndex`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IndexConfig {
    /// Dimension of every vector (1..=65536).
    pub dim: usize,
    /// Live vectors above which searches go through the HNSW graph instead of a full scan.
    pub ann_threshold: usize,
    /// HNSW links per node on upper levels (level 0 has twice as many); 2..=64.
    pub m: usize,
    /// HNSW beam width while inserting; 1..=4096.
    pub ef_construction: usize,
    /// HNSW beam width while searching; 1..=4096.
    pub ef_search: usize,
}

impl IndexConfig {
    /// Defaults for a dimension: graph above 1,024 vectors, m = 24, ef 64 / 64 (both widened with
    /// the graph's size; recall@1 0.99 for near-duplicate queries on 100k random 384-dim vectors,
    /// the hardest case for a graph).
    pub fn new(dim: usize) -> Self {
        IndexConfig { dim, ann_threshold: 1024, m: 24, ef_construction: 64, ef_search: 64 }
    }

    fn validate(&self) -> Result<(), DedupError> {
        if self.dim == 0 || self.dim > 65536 {
            return Err(DedupError::setting("dim", "must be an integer in [1, 65536]", self.dim));
        }
        if self.m < 2 || self.m > 64 {
            return Err(DedupError::setting("m", "must be an integer in [2, 64]", self.m));
        }
        if self.ef_construction == 0 || self.ef_construction > 4096 {
            return Err(DedupError::setting("ef_construction", "must be an integer in [1, 4096]", self.ef_construction));
        }
        if self.ef_search == 0 || self.ef_search > 4096 {
            return Err(DedupError::setting("ef_search", "must be an integer in [1, 4096]", self.ef_search));
        }
        Ok(())
    }
}

/// Vectors under stable `u32` keys, searchable by cosine similarity.
pub struct VectorIndex {
    cfg: IndexConfig,
    rows: Rows,
    row_key: Vec<u32>,
    /// Key -> row. Keyed u64 -> usize like the guard's maps, so the wasm compiles one table type.
    key_row: DetMap<u64, usize>,
    next_key: u32,
    graph: Option<Hnsw>,
}

/// Beam width for a graph of `live` vectors: the configured width up to about 8,000 vectors, then
/// growing with log2 of the size (a larger graph needs a wider beam for the same recall; 2.2x at
/// 100,000).
fn scaled_ef(base: usize, live: usize) -> usize {
    let f = ((live.max(1) as f64) / 1024.0).log2() / 3.0;
    if f > 1.0 {
        ((base as f64) * f).round() as usize
    } else {
        base
    }
}

/// Dead rows tolerated before storage and graph are rebuilt (and only when dead outnumber live).
const MIN_DEAD_FOR_COMPACTION: usize = 1024;

impl VectorIndex {
    /// An empty index.
    pub fn new(cfg: IndexConfig) -> Result<Self, DedupError> {
        cfg.validate()?;
        Ok(VectorIndex { cfg, rows: Rows::new(cfg.dim), row_key: Vec::new(), key_row: DetMap::default(), next_key: 0, graph: None })
    }

    /// The index's settings.
    pub fn config(&self) -> IndexConfig {
        self.cfg
    }

    /// Live vectors.
    pub fn len(&self) -> usize {
        self.rows.live_count()
    }

    /// True when no vector is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True once searches go through the graph.
    pub fn is_approximate(&self) -> bool {
        self.graph.is_some() && self.len() > self.cfg.ann_threshold
    }

    fn hnsw_params(&self) -> HnswParams {
        HnswParams { m: self.cfg.m, ef_construction: self.cfg.ef_construction }
    }

    /// Stores a vector (it must have the index's dimension, finite values and a non-zero norm);
    /// returns its key.
    pub fn add(&mut self, v: &[f32]) -> Result<u32, DedupError> {
        self.add_inner(v, 0).map(|(k, _)| k)
    }

    /// Stores a vector and returns its key with its `k` best matches among the vectors stored
    /// before it (as [`VectorIndex::search`] would have, but in graph mode taken from the
    /// insertion's own search, which saves a second pass over the graph).
    pub fn add_search(&mut self, v: &[f32], k: usize) -> Result<(u32, Vec<(u32, f32)>), DedupError> {
        self.add_inner(v, k)
    }

    fn add_inner(&mut self, v: &[f32], k: usize) -> Result<(u32, Vec<(u32, f32)>), DedupError> {
        let inv = inverse_norm(v, self.cfg.dim)?;
        let before = if k > 0 && !self.is_approximate() { Some(self.search(v, k)?) } else { None };
        if self.next_key == u32::MAX || self.rows.len() >= (u32::MAX as usize) - 1 {
            return Err(DedupError::argument("embedding", "must fit in the index (2^32 - 1 keys)", self.next_key));
        }
        let key = self.next_key;
        self.next_key += 1;
        let row = self.rows.push(v, inv);
        self.row_key.push(key);
        self.key_row.insert(u64::from(key), row as usize);
        let ef = scaled_ef(self.cfg.ef_construction, self.rows.live_count());
        let found = match self.graph.as_mut() {
            Some(g) => g.insert(&self.rows, row, ef),
            None => {
                if self.rows.live_count() > self.cfg.ann_threshold {
                    self.build_graph();
                }
                Vec::new()
            }
        };
        let matches = match before {
            Some(m) => m,
            None => {
                let rows = &self.rows;
                let row_key = &self.row_key;
                found.into_iter().filter(|&(_, r)| r != row && rows.is_live(r)).take(k).map(|(s, r)| (row_key[r as usize], s)).collect()
            }
        };
        Ok((key, matches))
    }

    fn build_graph(&mut self) {
        let mut g = Hnsw::new(self.hnsw_params());
        for r in 0..self.rows.len() as u32 {
            g.insert(&self.rows, r, scaled_ef(self.cfg.ef_construction, r as usize + 1));
        }
        self.graph = Some(g);
    }

    /// Removes a key; false when it is not stored.
    pub fn remove(&mut self, key: u32) -> bool {
        let row = match self.key_row.remove(&u64::from(key)) {
            Some(r) => r as u32,
            None => return false,
        };
        self.rows.kill(row);
        let dead = self.rows.len() - self.rows.live_count();
        if dead >= MIN_DEAD_FOR_COMPACTION && dead > self.rows.live_count() {
            self.compact();
        }
        true
    }

    /// Rewrites storage without dead rows and rebuilds the graph (keys do not change).
    fn compact(&mut self) {
        let mut rows = Rows::new(self.cfg.dim);
        let mut row_key = Vec::with_capacity(self.rows.live_count());
        let mut key_row = DetMap::default();
        for r in 0..self.rows.len() as u32 {
            if self.rows.is_live(r) {
                let nr = rows.push(self.rows.row(r), self.rows.inv(r));
                row_key.push(self.row_key[r as usize]);
                key_row.insert(u64::from(self.row_key[r as usize]), nr as usize);
            }
        }
        self.rows = rows;
        self.row_key = row_key;
        self.key_row = key_row;
        let had_graph = self.graph.take().is_some();
        if had_graph || self.rows.live_count() > self.cfg.ann_threshold {
            self.build_graph();
        }
    }

    /// Removes everything; keys keep increasing (an old key never names a new vector).
    pub fn clear(&mut self) {
        self.rows = Rows::new(self.cfg.dim);
        self.row_key.clear();
        self.key_row.clear();
        self.graph = None;
    }

    /// The vector stored under `key`, as it was added.
    pub fn get(&self, key: u32) -> Option<&[f32]> {
        self.key_row.get(&u64::from(key)).map(|&r| self.rows.row(r as u32))
    }

    /// Cosine similarity of two stored vectors.
    pub fn score(&self, a: u32, b: u32) -> Option<f32> {
        match (self.key_row.get(&u64::from(a)), self.key_row.get(&u64::from(b))) {
            (Some(&ra), Some(&rb)) => Some(self.rows.score_rows(ra as u32, rb as u32)),
            _ => None,
        }
    }

    /// The `k` stored vectors most similar to `q`, best first, as `(key, cosine)`. Exact while the
    /// index is small, through the graph (with exact scores) above `ann_threshold`.
    pub fn search(&mut self, q: &[f32], k: usize) -> Result<Vec<(u32, f32)>, DedupError> {
        let inv = inverse_norm(q, self.cfg.dim)?;
        let qu = unit(q, inv);
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let found: Vec<(f32, u32)> = if self.is_approximate() {
            let ef = scaled_ef(self.cfg.ef_search, self.rows.live_count()).max(k);
            let rows = &self.rows;
            let query = Query::new(qu);
            match self.graph.as_mut() {
                Some(g) => g.search(rows, &query, ef).into_iter().filter(|&(_, r)| rows.is_live(r)).take(k).collect(),
                None => Vec::new(),
            }
        } else {
            let mut top = TopK::new(k);
            for r in 0..self.rows.len() as u32 {
                if self.rows.is_live(r) {
                    top.offer(self.rows.score_unit(&qu, r), r);
                }
            }
            top.into_vec()
        };
        Ok(found.into_iter().map(|(s, r)| (self.row_key[r as usize], s)).collect())
    }

    /// Every pair of stored vectors with cosine >= `threshold`, as `(key_a, key_b, cosine)` with
    /// `key_a < key_b`, most similar first. Exact all-pairs while the index is small; above
    /// `ann_threshold` the candidates are read off the graph (each node's links and, through links
    /// that are themselves above the threshold, their links), then scored exactly.
    pub fn pairs(&self, threshold: f32) -> Vec<(u32, u32, f32)> {
        let live: Vec<u32> = (0..self.rows.len() as u32).filter(|&r| self.rows.is_live(r)).collect();
        let mut out: Vec<(u32, u32, f32)> = Vec::new();
        match self.graph.as_ref().filter(|_| self.is_approximate()) {
            None => {
                for (i, &a) in live.iter().enumerate() {
                    let ua = self.rows.unit_row(a);
                    for &b in &live[i + 1..] {
                        let s = self.rows.score_unit(&ua, b);
                        if s >= threshold {
                            out.push((a, b, s));
                        }
                    }
                }
            }
            Some(g) => {
                // Rows already scored against `a`: `seen[c] == a + 1`.
                let mut seen: Vec<u32> = vec![0; self.rows.len()];
                for &a in &live {
                    for l in g.links0(a) {
                        if l.score < threshold {
                            continue;
                        }
                        for c in std::iter::once(l.node).chain(g.links0(l.node).iter().filter(|l2| l2.score >= threshold).map(|l2| l2.node)) {
                            if c == a || !self.rows.is_live(c) || seen[c as usize] == a + 1 {
                                continue;
                            }
                            seen[c as usize] = a + 1;
                            let s = self.rows.score_rows(a, c);
                            if s >= threshold {
                                out.push((a.min(c), a.max(c), s));
                            }
                        }
                    }
                }
                crate::order::sort_stable_by(&mut out, |x, y| (x.0, x.1).cmp(&(y.0, y.1)));
                out.dedup_by(|x, y| x.0 == y.0 && x.1 == y.1);
            }
        }
        let mut keyed: Vec<(u32, u32, f32)> = out
            .into_iter()
            .map(|(a, b, s)| {
                let (ka, kb) = (self.row_key[a as usize], self.row_key[b as usize]);
                (ka.min(kb), ka.max(kb), s)
            })
            .collect();
        crate::order::sort_stable_by(&mut keyed, |x, y| y.2.total_cmp(&x.2).then_with(|| (x.0, x.1).cmp(&(y.0, y.1))));
        keyed
    }

    /// Groups near-duplicates without chaining: each cluster is a leader and members that are each
    /// within `threshold` of the leader itself (never only of another member). Leaders are taken by
    /// most neighbors first, then by key. Returns key lists, leader first, members best first;
    /// vectors with no neighbor above the threshold are in no cluster.
    pub fn clusters(&self, threshold: f32) -> Vec<Vec<u32>> {
        let pairs = self.pairs(threshold);
        // Keys that have a pair, each with its neighbours (key, score); `slot` finds a key's place.
        let mut slot: DetMap<u64, usize> = DetMap::default();
        let mut keys: Vec<u32> = Vec::new();
        let mut adj: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut place = |k: u32, keys: &mut Vec<u32>, adj: &mut Vec<Vec<(u32, f32)>>| -> usize {
            let next = keys.len();
            let at = *slot.entry(u64::from(k)).or_insert(next);
            if at == next {
                keys.push(k);
                adj.push(Vec::new());
            }
            at
        };
        for &(a, b, s) in &pairs {
            let ia = place(a, &mut keys, &mut adj);
            adj[ia].push((b, s));
            let ib = place(b, &mut keys, &mut adj);
            adj[ib].push((a, s));
        }
        let mut order: Vec<(usize, u32)> = adj.iter().zip(&keys).map(|(v, &k)| (v.len(), k)).collect();
        crate::order::sort_stable_by(&mut order, |x, y| y.0.cmp(&x.0).then_with(|| x.1.cmp(&y.1)));
        let at = |k: u32| slot.get(&u64::from(k)).copied().unwrap_or(usize::MAX);
        let mut taken = vec![false; keys.len()];
        let is_taken = |taken: &[bool], k: u32| taken.get(at(k)).copied().unwrap_or(false);
        let mut out = Vec::new();
        for (_, leader) in order {
            if is_taken(&taken, leader) {
                continue;
            }
            let mut members: Vec<(u32, f32)> = adj[at(leader)].iter().copied().filter(|&(m, _)| !is_taken(&taken, m)).collect();
            if members.is_empty() {
                continue;
            }
            crate::order::sort_stable_by(&mut members, |x, y| y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
            taken[at(leader)] = true;
            let mut cluster = vec![leader];
            for (m, _) in members {
                taken[at(m)] = true;
                cluster.push(m);
            }
            out.push(cluster);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    fn vector(seed: u64, dim: usize) -> Vec<f32> {
        (0..dim).map(|j| ((mix64(seed * 1_000_003 + j as u64) >> 40) as f32 / (1u64 << 24) as f32) - 0.5).collect()
    }

    fn near(v: &[f32], seed: u64, eps: f32) -> Vec<f32> {
        v.iter().enumerate().map(|(j, x)| x + eps * (((mix64(seed ^ (j as u64 * 7919)) >> 40) as f32 / (1u64 << 24) as f32) - 0.5)).collect()
    }

    #[test]
    fn exact_and_graph_search_agree_on_near_duplicates() {
        let dim = 32;
        let mut exact = VectorIndex::new(IndexConfig { ann_threshold: usize::MAX, ..IndexConfig::new(dim) }).unwrap();
        let mut approx = VectorIndex::new(IndexConfig { ann_threshold: 100, ..IndexConfig::new(dim) }).unwrap();
        for i in 0..2000 {
            let v = vector(i, dim);
            assert_eq!(exact.add(&v).unwrap(), i as u32);
            assert_eq!(approx.add(&v).unwrap(), i as u32);
        }
        assert!(approx.is_approximate() && !exact.is_approximate());
        let mut agree = 0;
        for i in 0..200u64 {
            let q = near(&vector(i * 9, dim), i, 0.2);
            let e = exact.search(&q, 1).unwrap()[0];
            let a = approx.search(&q, 1).unwrap()[0];
            if e.0 == a.0 {
                agree += 1;
                assert!((e.1 - a.1).abs() < 1e-6);
            }
        }
        assert!(agree >= 196, "recall {}/200", agree);
        // add_search reports what search reported just before the add.
        let q = near(&vector(77, dim), 5, 0.2);
        let expected = approx.search(&q, 3).unwrap();
        let (key, got) = approx.add_search(&q, 3).unwrap();
        assert_eq!(key, 2000);
        assert_eq!(got[0], expected[0]);
        let (_, small) = exact.add_search(&q, 2).unwrap();
        assert_eq!(small, exact.search(&q, 3).unwrap()[1..].to_vec());
    }

    #[test]
    fn removed_keys_are_never_returned_and_compaction_keeps_keys() {
        let dim = 8;
        let mut idx = VectorIndex::new(IndexConfig { ann_threshold: 50, ..IndexConfig::new(dim) }).unwrap();
        let vs: Vec<Vec<f32>> = (0..3000).map(|i| vector(i, dim)).collect();
        for v in &vs {
            idx.add(v).unwrap();
        }
        for k in 0..2500u32 {
            assert!(idx.remove(k));
        }
        assert!(!idx.remove(0));
        assert_eq!(idx.len(), 500);
        assert_eq!(idx.get(2999).unwrap(), vs[2999].as_slice());
        assert!(idx.get(5).is_none());
        for k in (2500..3000u32).step_by(25) {
            let r = idx.search(&vs[k as usize], 3).unwrap();
            assert_eq!(r[0].0, k);
            assert!(r.iter().all(|&(key, _)| key >= 2500));
        }
    }

    #[test]
    fn pairs_find_planted_duplicates_in_both_modes() {
        let dim = 48;
        for threshold in [usize::MAX, 64] {
            let mut idx = VectorIndex::new(IndexConfig { ann_threshold: threshold, ..IndexConfig::new(dim) }).unwrap();
            for i in 0..600u64 {
                idx.add(&vector(i, dim)).unwrap();
            }
            for i in 0..50u64 {
                idx.add(&near(&vector(i * 7, dim), i, 0.05)).unwrap();
            }
            let pairs = idx.pairs(0.95);
            for i in 0..50u32 {
                assert!(pairs.iter().any(|&(a, b, _)| a == i * 7 && b == 600 + i), "missing pair {}", i);
            }
            assert!(pairs.windows(2).all(|w| w[0].2 >= w[1].2));
        }
    }

    #[test]
    fn clusters_never_chain() {
        // a ~ b and b ~ c above 0.9, but a and c below it.
        let mut idx = VectorIndex::new(IndexConfig::new(2)).unwrap();
        let deg = |d: f32| [d.to_radians().cos(), d.to_radians().sin()];
        idx.add(&deg(0.0)).unwrap();
        idx.add(&deg(20.0)).unwrap();
        idx.add(&deg(40.0)).unwrap();
        let t = 0.9;
        assert!(idx.score(0, 2).unwrap() < t && idx.score(0, 1).unwrap() >= t);
        let cs = idx.clusters(t);
        for c in &cs {
            for &m in &c[1..] {
                assert!(idx.score(c[0], m).unwrap() >= t);
            }
        }
        assert_eq!(cs, vec![vec![1, 0, 2]]);
    }

    #[test]
    fn bad_config_and_vectors_are_errors() {
        assert!(VectorIndex::new(IndexConfig::new(0)).is_err());
        assert!(VectorIndex::new(IndexConfig { m: 1, ..IndexConfig::new(4) }).is_err());
        let mut idx = VectorIndex::new(IndexConfig::new(3)).unwrap();
        assert!(idx.add(&[1.0, 2.0]).is_err());
        assert!(idx.add(&[0.0, 0.0, 0.0]).is_err());
        assert!(idx.search(&[f32::NAN, 0.0, 1.0], 1).is_err());
        assert!(idx.is_empty());
    }
}
