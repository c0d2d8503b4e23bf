/**
 * The load generator behind BENCHMARKS.md: {@link Bench}, the main class, runs every {@link Workload}
 * over every implementation in one process, on servers launched for the run, so the ratios hold on a
 * noisy machine, and writes the {@link Result}s as JSON lines and a markdown table; {@link Pictures}
 * draws the throughput and latency pictures (PNG) from the JSON lines, after a run or from a kept file.
 * {@code Bench} exits non-zero when a workload's end state is wrong or an operation failed. Not published.
 */
package dev.warden.benchmarks;
