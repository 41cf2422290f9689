import { checkProduct, F32_NUMERICS, modelError } from "../lib/accuracy.ts";
import { randomMatrix } from "../lib/matrix.ts";
// f32 sequential sums emulated with Math.fround, with and without a fused multiply-add
for (const [m, k, n] of [[64, 1, 64], [64, 16, 64], [32, 256, 32], [16, 4096, 16], [8, 16384, 8]]) {
  const a = randomMatrix(m, k, 1), b = randomMatrix(k, n, 2);
  for (const fma of [true, false]) {
    const c = new Float32Array(m * n);
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
      let s = 0;
      for (let p = 0; p < k; p++) s = fma ? Math.fround(s + a[i*k+p]*b[p*n+j]) : Math.fround(s + Math.fround(a[i*k+p]*b[p*n+j]));
      c[i*n+j] = s;
    }
    const r = checkProduct(c, a, b, {m,k,n}, Array.from({length:m},(_,i)=>i), F32_NUMERICS, 3);
    console.log(m,k,n, fma?"fma":"mul+add", r.relErr.toExponential(2), JSON.stringify(Object.fromEntries(Object.entries(r.ratios).map(([x,y])=>[x,+y.toFixed(3)]))), r.passed);
  }
}
