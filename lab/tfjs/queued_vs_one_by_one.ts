// 13's live TF.js: the peer's queued timer (lib/peers/tfjs.ts) against one product per tf.time()
// with a readback between (the timer before), same process, same tensors' shapes.
import * as tf from "@tensorflow/tfjs-core";
import { session } from "../../lib/mod.ts";
import { openTfjs } from "../../lib/peers/tfjs.ts";
import { median } from "../../lib/timing.ts";
const s = await session();
const peer = await openTfjs(s.gpu);
const sq = (x: number) => ({ m: x, k: x, n: x });
for (const sh of [sq(1024), sq(2048), sq(4096), sq(1025), { m: 512, k: 1024, n: 2752 }]) {
  const r = await peer.run(sh, { budgetMs: 300 });
  const a = tf.randomUniform([sh.m, sh.k]) as tf.Tensor2D,
    b = tf.randomUniform([sh.k, sh.n]) as tf.Tensor2D;
  const one: number[] = [];
  for (let i = 0; i < 23; i++) {
    one.push(
      (await tf.time(() => {
        tf.matMul(a, b).dispose();
      })).kernelMs as number,
    );
  }
  const ms = median(one.slice(3));
  const gf = (t: number) => (2 * sh.m * sh.k * sh.n / t / 1e6).toFixed(0);
  console.log(
    `tfjs ${sh.m}x${sh.k}x${sh.n}: queued ${gf(r.medianMs!)} GFLOP/s (${
      r.medianMs!.toFixed(3)
    } ms, ${r.minMs!.toFixed(3)}-${
      r.maxMs!.toFixed(3)
    }, ${r.reps} runs, valid ${r.validated}); one-by-one ${gf(ms)} GFLOP/s (${ms.toFixed(3)} ms, ${
      Math.min(...one).toFixed(3)
    }-${Math.max(...one).toFixed(3)})`,
  );
  a.dispose();
  b.dispose();
}
peer.close();
