//! Stable sorting through one compiled routine. `slice::sort_by` is compiled anew for every element
//! type and comparator; the cold paths here (guard removals, vector-index pairs and clusters, graph
//! search results) sort positions instead, with the comparator behind a reference, so they share a
//! single copy of the standard library's merge sort. The result is exactly `sort_by`'s: stable,
//! by the same comparator.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`, like `v.sort_by(cmp)`.
pub(crate) fn sort_stable_by<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = sorted_positions(v.len(), &|a, b| cmp(&v[a], &v[b]));
    let mut old: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(order.iter().filter_map(|&i| old[i as usize].take()));
}

/// Positions `0..n` stably sorted by `cmp`.
#[inline(never)]
fn sorted_positions(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by(|&a, &b| cmp(a as usize, b as usize));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::mix64;

    #[test]
    fn same_order_as_sort_by() {
        for n in [0usize, 1, 2, 7, 20, 100, 1000] {
            let v: Vec<(u64, usize)> = (0..n).map(|i| (mix64(i as u64) % 7, i)).collect();
            let mut a = v.clone();
            a.sort_by(|x, y| x.0.cmp(&y.0));
            let mut b = v.clone();
            sort_stable_by(&mut b, |x, y| x.0.cmp(&y.0));
            assert_eq!(a, b);
        }
    }
}
