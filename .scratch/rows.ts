import { sampleRows } from "../lib/matrix.ts";
for (const [m,c] of [[10,3],[10,9],[100,8],[3,2],[5,1],[4096,35],[3,3]]) { const r=sampleRows(m,c,7); console.log(m,c,r.length, new Set(r).size, JSON.stringify(r.slice(0,12))); }
