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

/** xᵀ·y for x m×p, y m×q: p×q. */
export function crossCols(x: Mat, y: Mat): Mat {
  const p = x.cols;
  const q = y.cols;
  const xd = x.data;
  const yd = y.data;
  const out = new Float64Array(p * q);
  for (let i = 0; i < x.rows; i++) {
    for (let a = 0; a < p; a++) {
      const v = xd[i * p + a]!;
      if (v === 0) continue;
      for (let b = 0, o = a * q, yo = i * q; b < q; b++) out[o + b]! += v * yd[yo + b]!;
    }
  }
  return { rows: p, cols: q, data: out };
}

/** x·yᵀ for x p×n, y q×n: p×q. */
export function crossRows(x: Mat, y: Mat): Mat {
  const n = x.cols;
  const q = y.rows;
  const xd = x.data;
  const yd = y.data;
  const out = new Float64Array(x.rows * q);
  for (let a = 0; a < x.rows; a++) {
    for (let b = 0; b < q; b++) {
      let s = 0;
      for (let j = 0, xo = a * n, yo = b * n; j < n; j++) s += xd[xo + j]! * yd[yo + j]!;
      out[a * q + b] = s;
    }
  }
  return { rows: x.rows, cols: q, data: out };
}

/** Frobenius inner product Σ_ij x_ij·y_ij of equal-shape matrices. */
export function frobDot(x: Mat, y: Mat): number {
  const xd = x.data;
  const yd = y.data;
  let s = 0;
  for (let i = 0; i < xd.length; i++) s += xd[i]! * yd[i]!;
  return s;
}

/** Q of a thin QR, kept as its Householder vectors: vs[j] acts on rows j.. of an m-row matrix. */
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
  const { rows: m, cols: n } = x;
  const p = Math.min(m, n);
  const w = new Float64Array(x.data);
  const vs: Float64Array[] = [];
  const dots = new Float64Array(n);
  for (let j = 0; j < p; j++) {
    let norm = 0;
    for (let i = j; i < m; i++) norm += w[i * n + j]! ** 2;
    norm = Math.sqrt(norm);
    const v = new Float64Array(m - j);
    vs.push(v);
    if (norm === 0) continue;
    const x0 = w[j * n + j]!;
    const alpha = x0 >= 0 ? -norm : norm; // sign against x0 avoids cancellation in v[0]
    for (let i = j; i < m; i++) v[i - j] = w[i * n + j]!;
    v[0] = x0 - alpha;
    reflect(w, n, j, j, v, dots);
  }
  const r = new Float64Array(p * n);
  for (let i = 0; i < p; i++) for (let c = i; c < n; c++) r[i * n + c] = w[i * n + c]!;
  return { r: { rows: p, cols: n, data: r }, q: { m, vs } };
}

/** Q·y for y p×k: m×k, applying the reflections to [y; 0] instead of forming Q. */
export function applyQ(q: Reflectors, y: Mat): Mat {
  const k = y.cols;
  const w = new Float64Array(q.m * k);
  w.set(y.data);
  const dots = new Float64Array(k);
  for (let j = q.vs.length - 1; j >= 0; j--) reflect(w, k, j, 0, q.vs[j]!, dots);
  return { rows: q.m, cols: k, data: w };
}

/** Applies I − 2vvᵀ/vᵀv to rows row0.. and columns col0.. of a row-major matrix with `cols` columns. */
function reflect(w: Float64Array, cols: number, row0: number, col0: number, v: Float64Array, dots: Float64Array): void {
  let vv = 0;
  for (let i = 0; i < v.length; i++) vv += v[i]! * v[i]!;
  if (vv === 0) return;
  dots.fill(0, col0, cols);
  for (let i = 0; i < v.length; i++) {
    const vi = v[i]!;
    for (let c = col0, base = (row0 + i) * cols; c < cols; c++) dots[c]! += vi * w[base + c]!;
  }
  const f = 2 / vv;
  for (let i = 0; i < v.length; i++) {
    const vi = f * v[i]!;
    if (vi === 0) continue;
    for (let c = col0, base = (row0 + i) * cols; c < cols; c++) w[base + c]! -= vi * dots[c]!;
  }
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
  const norms = Array.from({ length: n }, (_, j) => Math.hypot(...w.subarray(j * m, j * m + m)));
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
