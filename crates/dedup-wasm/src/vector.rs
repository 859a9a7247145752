//! Embedding rows and cosine similarity.
//!
//! Rows are stored as given (f32, in blocks so that growing never copies the whole set) with their
//! inverse norm beside them, so `getEmbedding` returns what was added and cosine similarity costs one
//! dot product and a multiply. Dot products use eight independent accumulators in a fixed order:
//! the loop auto-vectorizes (SIMD where the target has it) and the result is bit-identical natively
//! and in wasm.

use crate::error::DedupError;

/// Rows per storage block.
const BLOCK_ROWS: usize = 256;

/// Dot product of two equal-length slices (the shorter length is used if they differ).
#[inline]
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let ca = a.chunks_exact(8);
    let cb = b.chunks_exact(8);
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..8 {
            acc[j] += x[j] * y[j];
        }
    }
    let mut tail = 0f32;
    for (x, y) in ta.iter().zip(tb) {
        tail += x * y;
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Dot product of two i8 code vectors, accumulated exactly in i32 (simd128: widen to i16 and use
/// the i16 dot-product instruction; integer sums are exact, so the result equals the scalar one).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    use core::arch::wasm32::{i16x8_extend_high_i8x16, i16x8_extend_low_i8x16, i32x4_add, i32x4_dot_i16x8, i32x4_extract_lane, i32x4_splat, i8x16};
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = i32x4_splat(0);
    let ca = a.chunks_exact(16);
    let cb = b.chunks_exact(16);
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        let vx = i8x16(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
        let vy = i8x16(y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[8], y[9], y[10], y[11], y[12], y[13], y[14], y[15]);
        acc = i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_low_i8x16(vx), i16x8_extend_low_i8x16(vy)));
        acc = i32x4_add(acc, i32x4_dot_i16x8(i16x8_extend_high_i8x16(vx), i16x8_extend_high_i8x16(vy)));
    }
    let mut sum = i32x4_extract_lane::<0>(acc) + i32x4_extract_lane::<1>(acc) + i32x4_extract_lane::<2>(acc) + i32x4_extract_lane::<3>(acc);
    for (x, y) in ta.iter().zip(tb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// Dot product of two i8 code vectors, accumulated exactly in i32 (sixteen lanes, fixed order).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0i32; 16];
    let ca = a.chunks_exact(16);
    let cb = b.chunks_exact(16);
    let (ta, tb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for j in 0..16 {
            acc[j] += i32::from(x[j]) * i32::from(y[j]);
        }
    }
    let mut sum: i32 = acc.iter().sum();
    for (x, y) in ta.iter().zip(tb) {
        sum += i32::from(*x) * i32::from(*y);
    }
    sum
}

/// Scalar quantization of a vector to i8 codes with one scale (`x ≈ code * scale`).
pub(crate) fn quantize(v: &[f32]) -> (Vec<i8>, f32) {
    let m = v.iter().fold(0f32, |a, x| a.max(x.abs()));
    if !(m > 0.0) || !m.is_finite() {
        return (vec![0; v.len()], 0.0);
    }
    let s = m / 127.0;
    (v.iter().map(|x| (x / s).round().max(-127.0).min(127.0) as i8).collect(), s)
}

/// A search query: the unit-length vector (for exact scores) and its i8 codes (for the graph walk,
/// which reads a quarter of the memory an f32 walk would).
pub(crate) struct Query {
    pub unit: Vec<f32>,
    code: Vec<i8>,
    scale: f32,
}

impl Query {
    pub(crate) fn new(unit: Vec<f32>) -> Self {
        let (code, scale) = quantize(&unit);
        Query { unit, code, scale }
    }
}

/// Checks that `v` is a usable embedding of dimension `dim` and returns its inverse L2 norm.
pub(crate) fn inverse_norm(v: &[f32], dim: usize) -> Result<f32, DedupError> {
    if v.len() != dim {
        return Err(DedupError::argument("embedding", "must have the index's dimension", format!("{} values, index dimension {}", v.len(), dim)));
    }
    let mut sum = 0f64;
    for (i, &x) in v.iter().enumerate() {
        if !x.is_finite() {
            // Printed as f64: the same text ("NaN", "inf", "-inf") for a non-finite value, and the wasm
            // then needs no f32 printer.
            return Err(DedupError::argument("embedding", "must contain only finite numbers", format!("{} at position {}", f64::from(x), i)));
        }
        sum += f64::from(x) * f64::from(x);
    }
    let inv = 1.0 / sum.sqrt();
    if sum == 0.0 || !inv.is_finite() || !(inv as f32).is_finite() {
        return Err(DedupError::argument("embedding", "must not be the zero vector", "a vector of norm 0"));
    }
    Ok(inv as f32)
}

/// Cosine similarity of two vectors of the same dimension, each validated as an embedding.
///
/// ```
/// let s = dedup_wasm::cosine_similarity(&[1.0, 0.0], &[1.0, 1.0]).unwrap();
/// assert!((s - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
/// assert!(dedup_wasm::cosine_similarity(&[0.0, 0.0], &[1.0, 0.0]).is_err());
/// ```
pub fn cosine_similarity(a: &[f32], b: &[f32]) -> Result<f32, DedupError> {
    let ia = inverse_norm(a, a.len())?;
    let ib = inverse_norm(b, a.len())?;
    Ok(clamp_score(dot(a, b) * ia * ib))
}

#[inline]
pub(crate) fn clamp_score(s: f32) -> f32 {
    s.max(-1.0).min(1.0)
}

/// Scales `v` to unit length with a precomputed inverse norm.
pub(crate) fn unit(v: &[f32], inv: f32) -> Vec<f32> {
    v.iter().map(|x| x * inv).collect()
}

/// Append-only storage of rows of one dimension. Row numbers are dense and never reused; a removed
/// row is only marked dead (the owner compacts when it pays).
pub(crate) struct Rows {
    dim: usize,
    blocks: Vec<Vec<f32>>,
    /// i8 codes of the rows, in blocks like `blocks`.
    codes: Vec<Vec<i8>>,
    /// Per row: code scale times inverse norm, so `dot_i8 * qmul` approximates the cosine part.
    qmul: Vec<f32>,
    inv: Vec<f32>,
    live: Vec<bool>,
    live_count: usize,
}

impl Rows {
    pub(crate) fn new(dim: usize) -> Self {
        Rows { dim, blocks: Vec::new(), codes: Vec::new(), qmul: Vec::new(), inv: Vec::new(), live: Vec::new(), live_count: 0 }
    }

    /// Rows ever pushed (live and dead).
    pub(crate) fn len(&self) -> usize {
        self.inv.len()
    }

    pub(crate) fn live_count(&self) -> usize {
        self.live_count
    }

    pub(crate) fn is_live(&self, r: u32) -> bool {
        self.live.get(r as usize).copied().unwrap_or(false)
    }

    /// Appends a validated row with its inverse norm; returns its row number.
    pub(crate) fn push(&mut self, v: &[f32], inv: f32) -> u32 {
        let r = self.inv.len();
        if r % BLOCK_ROWS == 0 {
            self.blocks.push(Vec::with_capacity(BLOCK_ROWS * self.dim));
            self.codes.push(Vec::with_capacity(BLOCK_ROWS * self.dim));
        }
        if let Some(b) = self.blocks.last_mut() {
            b.extend_from_slice(v);
        }
        let (code, scale) = quantize(v);
        if let Some(b) = self.codes.last_mut() {
            b.extend_from_slice(&code);
        }
        self.qmul.push(scale * inv);
        self.inv.push(inv);
        self.live.push(true);
        self.live_count += 1;
        r as u32
    }

    /// Marks a row dead; false when it was already dead or never existed.
    pub(crate) fn kill(&mut self, r: u32) -> bool {
        match self.live.get_mut(r as usize) {
            Some(l) if *l => {
                *l = false;
                self.live_count -= 1;
                true
            }
            _ => false,
        }
    }

    #[inline]
    pub(crate) fn row(&self, r: u32) -> &[f32] {
        let r = r as usize;
        let off = (r % BLOCK_ROWS) * self.dim;
        &self.blocks[r / BLOCK_ROWS][off..off + self.dim]
    }

    #[inline]
    fn code(&self, r: u32) -> &[i8] {
        let r = r as usize;
        let off = (r % BLOCK_ROWS) * self.dim;
        &self.codes[r / BLOCK_ROWS][off..off + self.dim]
    }

    /// Approximate cosine of a query and row `r` from the i8 codes (error about 0.01).
    #[inline]
    pub(crate) fn approx_query(&self, q: &Query, r: u32) -> f32 {
        dot_i8(&q.code, self.code(r)) as f32 * q.scale * self.qmul[r as usize]
    }

    /// Approximate cosine of two rows from their i8 codes.
    #[inline]
    pub(crate) fn approx_rows(&self, a: u32, b: u32) -> f32 {
        dot_i8(self.code(a), self.code(b)) as f32 * self.qmul[a as usize] * self.qmul[b as usize]
    }

    #[inline]
    pub(crate) fn inv(&self, r: u32) -> f32 {
        self.inv[r as usize]
    }

    /// Cosine similarity of a unit-length query and row `r`.
    #[inline]
    pub(crate) fn score_unit(&self, q: &[f32], r: u32) -> f32 {
        clamp_score(dot(q, self.row(r)) * self.inv(r as u32))
    }

    /// Cosine similarity of two rows.
    #[inline]
    pub(crate) fn score_rows(&self, a: u32, b: u32) -> f32 {
        clamp_score(dot(self.row(a), self.row(b)) * self.inv(a) * self.inv(b))
    }

    /// Row `r` scaled to unit length.
    pub(crate) fn unit_row(&self, r: u32) -> Vec<f32> {
        unit(self.row(r), self.inv(r))
    }
}

/// The `k` best `(score, row)` pairs seen, best first; ties go to the lower row number.
pub(crate) struct TopK {
    k: usize,
    items: Vec<(f32, u32)>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        TopK { k, items: Vec::with_capacity(k + 1) }
    }

    #[inline]
    pub(crate) fn floor(&self) -> f32 {
        if self.items.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.items.last().map_or(f32::NEG_INFINITY, |x| x.0)
        }
    }

    #[inline]
    pub(crate) fn offer(&mut self, score: f32, row: u32) {
        if self.k == 0 || (self.items.len() >= self.k && score <= self.floor()) {
            return;
        }
        let pos = self.items.iter().position(|&(s, r)| score > s || (score == s && row < r)).unwrap_or(self.items.len());
        self.items.insert(pos, (score, row));
        self.items.truncate(self.k);
    }

    pub(crate) fn into_vec(self) -> Vec<(f32, u32)> {
        self.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive_sum_for_every_length() {
        for n in 0..40 {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n={}", n);
        }
    }

    #[test]
    fn quantized_scores_approximate_cosine() {
        let dim = 384;
        let mut rows = Rows::new(dim);
        let vs: Vec<Vec<f32>> = (0..20).map(|i| (0..dim).map(|j| ((i * 31 + j * 17) as f32 * 0.013).sin()).collect()).collect();
        for v in &vs {
            rows.push(v, inverse_norm(v, dim).unwrap());
        }
        for a in 0..20u32 {
            let q = Query::new(rows.unit_row(a));
            for b in 0..20u32 {
                assert!((rows.approx_query(&q, b) - rows.score_rows(a, b)).abs() < 0.02);
                assert!((rows.approx_rows(a, b) - rows.score_rows(a, b)).abs() < 0.02);
            }
        }
        assert_eq!(dot_i8(&[1, -2, 3], &[4, 5, -6]), 4 - 10 - 18);
    }

    #[test]
    fn bad_vectors_are_rejected_with_the_rule() {
        assert!(inverse_norm(&[1.0, 2.0], 3).unwrap_err().to_string().contains("dimension"));
        assert!(inverse_norm(&[0.0, 0.0, 0.0], 3).unwrap_err().to_string().contains("zero"));
        assert!(inverse_norm(&[f32::NAN, 1.0, 0.0], 3).unwrap_err().to_string().contains("finite"));
        assert!(inverse_norm(&[f32::INFINITY, 1.0, 0.0], 3).is_err());
        assert!(inverse_norm(&[1e-45, 0.0, 0.0], 3).is_err());
        assert!(inverse_norm(&[3.0e38, 3.0e38, 0.0], 3).is_ok());
    }

    #[test]
    fn non_finite_values_print_the_same_as_f32_and_as_f64() {
        // Every non-finite f32: both infinities and NaN with every sign and payload (sampled densely).
        let mut values = vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN];
        values.extend((0..1u32 << 23).step_by(997).chain([1, (1 << 23) - 1]).flat_map(|m| [f32::from_bits(0x7F80_0000 | m), f32::from_bits(0xFF80_0000 | m)]));
        for x in values {
            assert!(!x.is_finite());
            assert_eq!(format!("{}", f64::from(x)), format!("{}", x), "{:08X}", x.to_bits());
            let e = inverse_norm(&[1.0, x], 2).unwrap_err().to_string();
            assert!(e.contains(&format!("{} at position 1", x)), "{}", e);
        }
    }

    #[test]
    fn rows_score_as_cosine_and_survive_many_blocks() {
        let mut rows = Rows::new(3);
        for i in 0..600 {
            let v = [1.0 + i as f32, 2.0, 0.5];
            let inv = inverse_norm(&v, 3).unwrap();
            assert_eq!(rows.push(&v, inv), i as u32);
        }
        assert_eq!(rows.row(599), &[600.0, 2.0, 0.5]);
        assert!((rows.score_rows(5, 5) - 1.0).abs() < 1e-6);
        assert!(rows.kill(3));
        assert!(!rows.kill(3));
        assert_eq!(rows.live_count(), 599);
    }

    #[test]
    fn topk_keeps_the_best_in_order() {
        let mut t = TopK::new(3);
        for (s, r) in [(0.1, 0), (0.9, 1), (0.5, 2), (0.9, 3), (0.2, 4)] {
            t.offer(s, r);
        }
        assert_eq!(t.into_vec(), vec![(0.9, 1), (0.9, 3), (0.5, 2)]);
    }
}
