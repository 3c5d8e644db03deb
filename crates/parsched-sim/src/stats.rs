//! Summary statistics: means and Student-t confidence intervals.

/// The 0.95 quantile of Student's t with `df` degrees of freedom (the
/// half-width factor of a two-sided 90% interval). Exact table values for
/// df ≤ 30, a Cornish–Fisher expansion beyond (error < 0.001).
pub fn t95(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        6.3138, 2.9200, 2.3534, 2.1318, 2.0150, 1.9432, 1.8946, 1.8595, 1.8331, 1.8125, 1.7959,
        1.7823, 1.7709, 1.7613, 1.7531, 1.7459, 1.7396, 1.7341, 1.7291, 1.7247, 1.7207, 1.7171,
        1.7139, 1.7109, 1.7081, 1.7056, 1.7033, 1.7011, 1.6991, 1.6973,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df as usize - 1],
        _ => {
            let z = 1.644_853_626_951_472_2_f64;
            let n = df as f64;
            let g1 = (z.powi(3) + z) / 4.0;
            let g2 = (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0;
            z + g1 / n + g2 / (n * n)
        }
    }
}

/// Mean and 90% confidence half-width of independent observations
/// (replication means or batch means). The half-width is NaN for one value.
pub fn mean_ci90(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return (mean, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t95(n as u64 - 1) * (var / n as f64).sqrt())
}

/// Means of `batches` consecutive, equal batches of `xs` (the last observations
/// that do not fill a batch are dropped).
pub fn batch_means(xs: &[f64], batches: usize) -> Vec<f64> {
    let size = xs.len() / batches.max(1);
    if size == 0 {
        return vec![];
    }
    xs.chunks_exact(size)
        .take(batches)
        .map(|c| c.iter().sum::<f64>() / size as f64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert_eq!(t95(4), 2.1318);
        assert!((t95(40) - 1.6839).abs() < 1e-3);
        assert!((t95(120) - 1.6577).abs() < 1e-3);
        assert!((t95(100_000) - 1.6449).abs() < 1e-3);
    }

    #[test]
    fn ci_of_known_sample() {
        let (m, h) = mean_ci90(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(m, 3.0);
        // s = sqrt(2.5), n = 5, t = 2.1318
        assert!((h - 2.1318 * (2.5f64 / 5.0).sqrt()).abs() < 1e-12);
        assert!(mean_ci90(&[7.0]).1.is_nan());
    }

    #[test]
    fn batches() {
        let xs: Vec<f64> = (0..25).map(|i| i as f64).collect();
        assert_eq!(batch_means(&xs, 5), vec![2.0, 7.0, 12.0, 17.0, 22.0]);
        assert_eq!(batch_means(&xs[..3], 5), Vec::<f64>::new());
    }
}
