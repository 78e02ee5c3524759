// Small dense Float64 kernels for the algebra. Inputs are Float32, but products, QR and SVD run in
// Float64 so cancellation (a − a, linear − cat) lands near 1e-8 relative instead of 1e-4.
// Loops read `.data` into locals: V8 does not hoist those loads and they cost 3–5× here.

/** Row-major rows × cols. */
export interface Mat {
  readonly rows: number;
  readonly cols: number;
  readonly data: Float64Array;
}

export function zeros(rows: number, cols: number): Mat {
  return { rows, cols, data: new Float64Array(rows * cols) };
}

export function fromF32(rows: number, cols: number, src: Float32Array, s = 1): Mat {
  const data = new Float64Array(rows * cols);
  for (let i = 0; i < data.length; i++) data[i] = s * src[i]!;
  return { rows, cols, data };
}

export function transpose(m: Mat): Mat {
  const { rows, cols, data } = m;
  const t = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) t[j * rows + i] = data[i * cols + j]!;
  return { rows: cols, cols: rows, data: t };
}

/** x·y, i-k-j order so the inner loop runs along rows of both. */
export function matmul(x: Mat, y: Mat): Mat {
  const n = y.cols;
  const K = x.cols;
  const xd = x.data;
  const yd = y.data;
  const out = new Float64Array(x.rows * n);
  for (let i = 0; i < x.rows; i++) {
    for (let k = 0; k < K; k++) {
      const v = xd[i * K + k]!;
      if (v === 0) continue;
      for (let j = 0, o = i * n, yo = k * n; j < n; j++) out[o + j]! += v * yd[yo + j]!;
    }
  }
  return { rows: x.rows, cols: n, data: out };
}

/** xᵀ·y for x m×p, y m×q: p×q. A Gram matrix (y === x) computes one triangle and mirrors it. */
export function crossCols(x: Mat, y: Mat): Mat {
  const p = x.cols;
  const q = y.cols;
  const sym = x === y;
  const xd = x.data;
  const yd = y.data;
  const out = new Float64Array(p * q);
  for (let i = 0; i < x.rows; i++) {
    for (let a = 0; a < p; a++) {
      const v = xd[i * p + a]!;
      if (v === 0) continue;
      for (let b = sym ? a : 0, o = a * q, yo = i * q; b < q; b++) out[o + b]! += v * yd[yo + b]!;
    }
  }
  if (sym) mirrorUpper(out, p);
  return { rows: p, cols: q, data: out };
}

/** x·yᵀ for x p×n, y q×n: p×q. A Gram matrix (y === x) computes one triangle and mirrors it. */
export function crossRows(x: Mat, y: Mat): Mat {
  const n = x.cols;
  const q = y.rows;
  const sym = x === y;
  const xd = x.data;
  const yd = y.data;
  const out = new Float64Array(x.rows * q);
  for (let a = 0; a < x.rows; a++) {
    for (let b = sym ? a : 0; b < q; b++) {
      let s = 0;
      for (let j = 0, xo = a * n, yo = b * n; j < n; j++) s += xd[xo + j]! * yd[yo + j]!;
      out[a * q + b] = s;
    }
  }
  if (sym) mirrorUpper(out, q);
  return { rows: x.rows, cols: q, data: out };
}

function mirrorUpper(g: Float64Array, n: number): void {
  for (let a = 1; a < n; a++) for (let b = 0; b < a; b++) g[a * n + b] = g[b * n + a]!;
}

/** Frobenius inner product Σ_ij x_ij·y_ij of equal-shape matrices. */
export function frobDot(x: Mat, y: Mat): number {
  const xd = x.data;
  const yd = y.data;
  let s = 0;
  for (let i = 0; i < xd.length; i++) s += xd[i]! * yd[i]!;
  return s;
}

/** Q of a thin QR as Householder vectors: vs[j] acts on rows j.., scaled so vᵀv = 2 (H = I − vvᵀ). */
export interface Reflectors {
  readonly m: number;
  readonly vs: readonly Float64Array[];
}

/**
 * Thin Householder QR of an m×n matrix: r is p×n upper triangular, p = min(m, n), and Q (m×p,
 * orthonormal columns) stays implicit; a zero column skips its reflection, so rank-deficient
 * input still gives an orthonormal Q.
 */
export function qr(x: Mat): { r: Mat; q: Reflectors } {
  return qrOfColumns(transpose(x).data, x.rows, x.cols);
}

/** QR of yᵀ: y's rows are already yᵀ's columns, so no transpose is needed. */
export function qrOfTranspose(y: Mat): { r: Mat; q: Reflectors } {
  return qrOfColumns(new Float64Array(y.data), y.cols, y.rows);
}

// Column-major work array (column c = w[c*m .. c*m+m)): the reflections then run along long
// contiguous columns, about twice as fast in V8 as short row segments.
function qrOfColumns(w: Float64Array, m: number, n: number): { r: Mat; q: Reflectors } {
  const p = Math.min(m, n);
  const vs: Float64Array[] = [];
  for (let j = 0; j < p; j++) {
    const col = w.subarray(j * m + j, j * m + m);
    let norm = 0;
    for (let i = 0; i < col.length; i++) norm += col[i]! * col[i]!;
    norm = Math.sqrt(norm);
    const v = new Float64Array(m - j);
    vs.push(v);
    if (norm === 0) continue;
    const alpha = col[0]! >= 0 ? -norm : norm; // sign against x₀ avoids cancellation in v[0]
    v.set(col);
    v[0]! -= alpha;
    const unit = Math.sqrt(1 / (norm * (norm + Math.abs(col[0]!)))); // vᵀv = 2·‖x‖·(‖x‖ + |x₀|)
    // A column left at ~1e-160 by the reflections before (rank-deficient input, such as copies of one
    // adapter) underflows norm² to 0: it is a zero column, skipped like one.
    if (!Number.isFinite(unit)) {
      v.fill(0);
      continue;
    }
    for (let i = 0; i < v.length; i++) v[i]! *= unit;
    for (let c = j; c < n; c++) reflect(w, c * m + j, v);
  }
  const r = new Float64Array(p * n);
  for (let c = 0; c < n; c++) for (let i = 0; i <= Math.min(c, p - 1); i++) r[i * n + c] = w[c * m + i]!;
  return { r: { rows: p, cols: n, data: r }, q: { m, vs } };
}

/** Q·y for y p×k: m×k, applying the reflections to [y; 0] instead of forming Q. */
export function applyQ(q: Reflectors, y: Mat): Mat {
  const { m, vs } = q;
  const k = y.cols;
  const w = new Float64Array(m * k); // column-major
  for (let i = 0; i < y.rows; i++) for (let c = 0; c < k; c++) w[c * m + i] = y.data[i * k + c]!;
  for (let j = vs.length - 1; j >= 0; j--) for (let c = 0; c < k; c++) reflect(w, c * m + j, vs[j]!);
  return transpose({ rows: k, cols: m, data: w });
}

/** Applies I − vvᵀ (vᵀv = 2) to the segment w[off .. off + v.length). */
function reflect(w: Float64Array, off: number, v: Float64Array): void {
  let dot = 0;
  for (let i = 0; i < v.length; i++) dot += v[i]! * w[off + i]!;
  if (dot === 0) return;
  for (let i = 0; i < v.length; i++) w[off + i]! -= dot * v[i]!;
}

/**
 * Thin SVD x = u·diag(s)·vᵀ, t = min(rows, cols) values, descending. One-sided Jacobi (Hestenes)
 * orthogonalizes the columns of x (or xᵀ if wider than tall) without accumulating rotations: the
 * orthogonal columns are σ·(long-side vectors), and the short side comes back as xᵀu/σ (or x·v/σ).
 * Chosen over Golub–Kahan for these small cores: short, accurate on rank-deficient input, contiguous
 * sweeps. Directions with σ ≤ 1e-13·σ₁ get zero vectors on both sides: their share of x is below
 * that bound and dividing by σ there would only amplify noise.
 */
export function svd(x: Mat): { u: Mat; s: Float64Array; v: Mat } {
  const wide = x.cols > x.rows;
  const y = wide ? transpose(x) : x; // m×n, n ≤ m
  const m = y.rows;
  const n = y.cols;
  const w = orthogonalizeColumns(y);
  const norms = Array.from({ length: n }, (_, j) => {
    let sq = 0;
    for (let r = j * m; r < j * m + m; r++) sq += w[r]! * w[r]!;
    return Math.sqrt(sq);
  });
  const order = norms.map((_, j) => j).sort((p, q) => norms[q]! - norms[p]!);
  const s = Float64Array.from(order, (j) => norms[j]!);
  const floor = 1e-13 * (s[0] ?? 0);
  const long = zeros(m, n);
  order.forEach((j, col) => {
    if (s[col]! <= floor) return;
    for (let r = 0; r < m; r++) long.data[r * n + col] = w[j * m + r]! / s[col]!;
  });
  const short = crossCols(y, long); // n×n: yᵀu = v·diag(s)
  for (let col = 0; col < n; col++) {
    const inv = s[col]! > floor ? 1 / s[col]! : 0;
    for (let r = 0; r < n; r++) short.data[r * n + col]! *= inv;
  }
  return wide ? { u: short, s, v: long } : { u: long, s, v: short };
}

/** Cyclic one-sided Jacobi: returns the columns of y·V (column-major), mutually orthogonal. */
function orthogonalizeColumns(y: Mat): Float64Array {
  const m = y.rows;
  const n = y.cols;
  const w = transpose(y).data; // column j = w[j*m .. j*m+m)
  const sq = new Float64Array(n);
  for (let sweep = 0; sweep < 60; sweep++) {
    for (let j = 0; j < n; j++) {
      let a = 0;
      for (let r = j * m; r < j * m + m; r++) a += w[r]! * w[r]!;
      sq[j] = a;
    }
    let rotated = false;
    for (let i = 0; i < n - 1; i++) {
      for (let j = i + 1; j < n; j++) {
        const oi = i * m;
        const oj = j * m;
        let g = 0;
        for (let r = 0; r < m; r++) g += w[oi + r]! * w[oj + r]!;
        const a = sq[i]!;
        const b = sq[j]!;
        if (g === 0 || Math.abs(g) <= 1e-15 * Math.sqrt(a * b)) continue;
        rotated = true;
        const zeta = (b - a) / (2 * g);
        const t = (zeta >= 0 ? 1 : -1) / (Math.abs(zeta) + Math.sqrt(1 + zeta * zeta));
        const c = 1 / Math.sqrt(1 + t * t);
        const s = c * t;
        for (let r = 0; r < m; r++) {
          const wi = w[oi + r]!;
          const wj = w[oj + r]!;
          w[oi + r] = c * wi - s * wj;
          w[oj + r] = s * wi + c * wj;
        }
        // Rutishauser's updates keep the squared norms without another pass; refreshed each sweep.
        sq[i] = a - t * g;
        sq[j] = b + t * g;
      }
    }
    if (!rotated) break;
  }
  return w;
}
