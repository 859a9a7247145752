//! A hierarchical navigable small-world graph (HNSW) over [`Rows`], for approximate best-match
//! search at scale.
//!
//! Determinism: a node's level comes from a hash of its row number, not from a random generator, so
//! the same insertions build the same graph everywhere. Every link stores the exact cosine score of
//! its two ends, which lets a full neighbor list admit a closer node without recomputing anything,
//! and lets the sweep read duplicate candidates straight off the graph.
//!
//! Scores are always computed on the full f32 rows, so the candidates a search returns are already
//! ranked exactly; the approximation is only in which nodes get visited.

use crate::hash::{mix64, DetMap};
use crate::vector::{Query, Rows};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A neighbor and the cosine similarity to it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Link {
    pub node: u32,
    pub score: f32,
}

/// Heap item ordered by score, then by lower node number (for determinism).
#[derive(Clone, Copy, PartialEq)]
struct Scored(f32, u32);
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0).then_with(|| other.1.cmp(&self.1))
    }
}

/// Graph parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HnswParams {
    /// Links per node on upper levels; level 0 holds twice as many.
    pub m: usize,
    /// Beam width while inserting.
    pub ef_construction: usize,
}

pub(crate) struct Hnsw {
    p: HnswParams,
    m0: usize,
    level_mult: f64,
    levels: Vec<u8>,
    /// Level-0 links, `m0` slots per node.
    l0: Vec<Link>,
    l0_len: Vec<u8>,
    /// Links of levels 1.. for the few nodes that have them (index `level - 1`), found through
    /// `upper_at` (node -> index). The index is keyed u64 -> usize like the crate's other maps,
    /// so the wasm carries one hash table type for all of them.
    upper: Vec<Vec<Vec<Link>>>,
    upper_at: DetMap<u64, usize>,
    entry: Option<u32>,
    max_level: u8,
    visited: Vec<u32>,
    visit_mark: u32,
}

const NO_LINK: Link = Link { node: u32::MAX, score: f32::NEG_INFINITY };

impl Hnsw {
    pub(crate) fn new(p: HnswParams) -> Self {
        let m = p.m.max(2).min(64);
        Hnsw {
            p: HnswParams { m, ef_construction: p.ef_construction.max(m) },
            m0: m * 2,
            level_mult: 1.0 / (m as f64).ln(),
            levels: Vec::new(),
            l0: Vec::new(),
            l0_len: Vec::new(),
            upper: Vec::new(),
            upper_at: DetMap::default(),
            entry: None,
            max_level: 0,
            visited: Vec::new(),
            visit_mark: 0,
        }
    }

    fn level_for(&self, node: u32) -> u8 {
        let h = mix64(u64::from(node) ^ 0x243f_6a88_85a3_08d3);
        let u = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let l = (-u.ln() * self.level_mult).floor();
        if l.is_finite() && l > 0.0 {
            (l as u32).min(16) as u8
        } else {
            0
        }
    }

    /// Level-0 neighbors of a node.
    pub(crate) fn links0(&self, node: u32) -> &[Link] {
        let n = node as usize;
        &self.l0[n * self.m0..n * self.m0 + self.l0_len[n] as usize]
    }

    fn links(&self, node: u32, level: u8) -> &[Link] {
        if level == 0 {
            return self.links0(node);
        }
        self.upper_at.get(&u64::from(node)).and_then(|&i| self.upper[i].get(level as usize - 1)).map_or(&[], |v| v.as_slice())
    }

    fn upper_mut(&mut self, node: u32, level: u8) -> Option<&mut Vec<Link>> {
        let i = *self.upper_at.get(&u64::from(node))?;
        self.upper[i].get_mut(level as usize - 1)
    }

    fn set_links(&mut self, node: u32, level: u8, links: &[Link]) {
        if level == 0 {
            let n = node as usize;
            let k = links.len().min(self.m0);
            self.l0[n * self.m0..n * self.m0 + k].copy_from_slice(&links[..k]);
            self.l0_len[n] = k as u8;
        } else {
            let k = links.len().min(self.p.m);
            if let Some(v) = self.upper_mut(node, level) {
                v.clear();
                v.extend_from_slice(&links[..k]);
            }
        }
    }

    /// Adds `link` to `node`'s list at `level`; a full list drops its worst link if `link` is better.
    fn add_link(&mut self, node: u32, level: u8, link: Link) {
        let cap = if level == 0 { self.m0 } else { self.p.m };
        let list: &mut [Link] = if level == 0 {
            let n = node as usize;
            let len = self.l0_len[n] as usize;
            if len < cap {
                self.l0[n * self.m0 + len] = link;
                self.l0_len[n] += 1;
                return;
            }
            &mut self.l0[n * self.m0..n * self.m0 + len]
        } else {
            match self.upper_mut(node, level) {
                Some(v) if v.len() < cap => {
                    v.push(link);
                    return;
                }
                Some(v) => v.as_mut_slice(),
                None => return,
            }
        };
        let mut worst = 0;
        for (i, l) in list.iter().enumerate() {
            if l.score < list[worst].score {
                worst = i;
            }
        }
        if link.score > list[worst].score {
            list[worst] = link;
        }
    }

    fn next_mark(&mut self) -> u32 {
        if self.visited.len() < self.levels.len() {
            self.visited.resize(self.levels.len(), 0);
        }
        self.visit_mark = self.visit_mark.wrapping_add(1);
        if self.visit_mark == 0 {
            self.visited.iter_mut().for_each(|v| *v = 0);
            self.visit_mark = 1;
        }
        self.visit_mark
    }

    /// Beam search on one level from `entry`, walking on approximate (i8) scores; returns up to
    /// `ef` nodes re-ranked by their exact cosine, best first.
    fn search_level(&mut self, rows: &Rows, q: &Query, entry: &[(f32, u32)], ef: usize, level: u8) -> Vec<(f32, u32)> {
        let mark = self.next_mark();
        let mut candidates: BinaryHeap<Scored> = BinaryHeap::new();
        let mut best: BinaryHeap<std::cmp::Reverse<Scored>> = BinaryHeap::new();
        for &(s, n) in entry {
            if self.visited[n as usize] == mark {
                continue;
            }
            self.visited[n as usize] = mark;
            candidates.push(Scored(s, n));
            best.push(std::cmp::Reverse(Scored(s, n)));
            if best.len() > ef {
                best.pop();
            }
        }
        while let Some(Scored(s, n)) = candidates.pop() {
            let floor = best.peek().map_or(f32::NEG_INFINITY, |r| (r.0).0);
            if best.len() >= ef && s < floor {
                break;
            }
            let links_len = self.links(n, level).len();
            for i in 0..links_len {
                let nb = self.links(n, level)[i].node;
                if self.visited[nb as usize] == mark {
                    continue;
                }
                self.visited[nb as usize] = mark;
                let sc = rows.approx_query(q, nb);
                let floor = best.peek().map_or(f32::NEG_INFINITY, |r| (r.0).0);
                if best.len() < ef || sc > floor {
                    candidates.push(Scored(sc, nb));
                    best.push(std::cmp::Reverse(Scored(sc, nb)));
                    if best.len() > ef {
                        best.pop();
                    }
                }
            }
        }
        let mut out: Vec<(f32, u32)> = best.into_iter().map(|r| (rows.score_unit(&q.unit, (r.0).1), (r.0).1)).collect();
        crate::order::sort_stable_by(&mut out, |a, b| Scored(b.0, b.1).cmp(&Scored(a.0, a.1)));
        out
    }

    /// Greedy descent through the upper levels down to `stop` (exclusive); returns the entry for it.
    fn descend(&self, rows: &Rows, q: &Query, stop: u8) -> Option<(f32, u32)> {
        let mut ep = self.entry?;
        let mut cur = rows.approx_query(q, ep);
        let mut level = self.max_level;
        while level > stop {
            let mut changed = true;
            while changed {
                changed = false;
                for l in self.links(ep, level) {
                    let s = rows.approx_query(q, l.node);
                    if s > cur || (s == cur && l.node < ep) {
                        cur = s;
                        ep = l.node;
                        changed = true;
                    }
                }
            }
            level -= 1;
        }
        Some((cur, ep))
    }

    /// Chooses up to `m` links among `cands` (best first): a candidate is preferred when it is closer
    /// to the new node than to every link already chosen (that spreads links across directions);
    /// the remaining slots are filled with the best of the rest.
    fn select(&self, rows: &Rows, cands: &[(f32, u32)], m: usize) -> Vec<Link> {
        let mut chosen: Vec<Link> = Vec::with_capacity(m);
        let mut skipped: Vec<Link> = Vec::new();
        for &(s, c) in cands.iter().take(m * 2) {
            if chosen.len() >= m {
                break;
            }
            let diverse = chosen.iter().all(|r| rows.approx_rows(c, r.node) < s);
            if diverse {
                chosen.push(Link { node: c, score: s });
            } else {
                skipped.push(Link { node: c, score: s });
            }
        }
        for l in skipped {
            if chosen.len() >= m {
                break;
            }
            chosen.push(l);
        }
        chosen
    }

    /// Inserts row `node` (rows must be inserted in increasing row order, each once). Returns the
    /// nodes the level-0 insertion search found, best first (the new node excluded): the best
    /// matches of the new vector, for free.
    /// `ef` is the beam width of the insertion search.
    pub(crate) fn insert(&mut self, rows: &Rows, node: u32, ef: usize) -> Vec<(f32, u32)> {
        let ef = ef.max(self.p.m);
        let level = self.level_for(node);
        let n = node as usize;
        if self.levels.len() <= n {
            self.levels.resize(n + 1, 0);
            self.l0.resize((n + 1) * self.m0, NO_LINK);
            self.l0_len.resize(n + 1, 0);
        }
        self.levels[n] = level;
        if level > 0 {
            // Each row is inserted once, so `node` has no lists yet.
            self.upper_at.insert(u64::from(node), self.upper.len());
            self.upper.push(vec![Vec::new(); level as usize]);
        }
        let q = Query::new(rows.unit_row(node));
        let mut ep = match self.descend(rows, &q, level) {
            Some(e) => e,
            None => {
                self.entry = Some(node);
                self.max_level = level;
                return Vec::new();
            }
        };
        let top = level.min(self.max_level);
        let mut l = top;
        let found;
        loop {
            let cands = self.search_level(rows, &q, &[ep], ef, l);
            let cands: Vec<(f32, u32)> = cands.into_iter().filter(|&(_, c)| c != node).collect();
            let chosen = self.select(rows, &cands, self.p.m);
            self.set_links(node, l, &chosen);
            for link in &chosen {
                self.add_link(link.node, l, Link { node, score: link.score });
            }
            if let Some(&first) = cands.first() {
                ep = first;
            }
            if l == 0 {
                found = cands;
                break;
            }
            l -= 1;
        }
        if level > self.max_level {
            self.max_level = level;
            self.entry = Some(node);
        }
        found
    }

    /// Up to `ef` nodes nearest to the unit-length query `q`, best first, exactly scored.
    pub(crate) fn search(&mut self, rows: &Rows, q: &Query, ef: usize) -> Vec<(f32, u32)> {
        match self.descend(rows, q, 0) {
            Some(ep) => self.search_level(rows, q, &[ep], ef.max(1), 0),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::inverse_norm;

    fn pseudo_rows(n: usize, dim: usize) -> Rows {
        let mut rows = Rows::new(dim);
        for i in 0..n {
            let v: Vec<f32> = (0..dim).map(|j| ((mix64((i * dim + j) as u64) >> 40) as f32 / (1u64 << 24) as f32) - 0.5).collect();
            let inv = inverse_norm(&v, dim).unwrap();
            rows.push(&v, inv);
        }
        rows
    }

    #[test]
    fn finds_every_stored_row_as_its_own_best_match() {
        let rows = pseudo_rows(800, 24);
        let mut g = Hnsw::new(HnswParams { m: 12, ef_construction: 64 });
        for r in 0..800 {
            g.insert(&rows, r, 64);
        }
        let mut hits = 0;
        for r in 0..800u32 {
            let q = Query::new(rows.unit_row(r));
            if g.search(&rows, &q, 32).first().map(|x| x.1) == Some(r) {
                hits += 1;
            }
        }
        assert!(hits >= 795, "self-recall {}/800", hits);
    }

    #[test]
    fn same_insertions_build_the_same_graph() {
        let rows = pseudo_rows(300, 8);
        let build = || {
            let mut g = Hnsw::new(HnswParams { m: 8, ef_construction: 32 });
            for r in 0..300 {
                g.insert(&rows, r, 64);
            }
            (0..300u32).map(|r| g.links0(r).iter().map(|l| l.node).collect::<Vec<_>>()).collect::<Vec<_>>()
        };
        assert_eq!(build(), build());
    }

    #[test]
    fn link_scores_are_exact() {
        let rows = pseudo_rows(200, 16);
        let mut g = Hnsw::new(HnswParams { m: 6, ef_construction: 24 });
        for r in 0..200 {
            g.insert(&rows, r, 64);
        }
        for r in 0..200u32 {
            for l in g.links0(r) {
                assert!((l.score - rows.score_rows(r, l.node)).abs() < 1e-5);
            }
        }
    }
}
