/* smoke.cu - the kernel `offwheel smoke` runs to prove the device computes.
 *
 * Built by scripts/gen-kernels into kernels/smoke.ptx (compute_75, PTX ISA
 * 7.0) and kernels/smoke.fatbin (SASS sm_75 .. sm_120 + compute_75 PTX);
 * both are embedded into offwheel, so building offwheel needs no nvcc.
 *
 * Contract (the host side checks it exactly, no float tolerance needed):
 *   ow_smoke(x, y, a, n, sum): for every i < n
 *       y[i] = a * x[i] + y[i]
 *       *sum += (unsigned long long)y[i] * (i % 13 + 1)    (after the update)
 *   Launch with any grid (grid-stride loop); *sum must start at 0.
 *   With x[i] = i % 1000, y[i] = i % 7 and a = 2 every value is an integer
 *   below 2^24, so y[i] = 2 * (i % 1000) + i % 7 exactly and the sum is
 *   computable on the CPU with 64-bit integers. */

extern "C" __global__ void ow_smoke(const float *x, float *y, float a,
				    unsigned int n, unsigned long long *sum)
{
	unsigned long long local = 0;
	unsigned int stride = blockDim.x * gridDim.x;
	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float v = a * x[i] + y[i];
		y[i] = v;
		local += (unsigned long long)v * (i % 13u + 1u);
	}
	atomicAdd(sum, local);
}
