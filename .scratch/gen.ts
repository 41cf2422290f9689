import { step } from "../kernels/12_generated/step.ts";
console.log(step.generate!(step.params));
