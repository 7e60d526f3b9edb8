/* abi.c - the layouts of the public structs a caller fills, for reading them by their size field.
 *
 * Every such struct begins with `size_t size` (docs/runtime.md, "ABI and versions").  Each layout lists
 * every field with its offset and size, in order, so that rt_struct_in can refuse a size that ends inside a
 * field (half a device pointer read as an address, half of an int64_t as a count), naming the field; a
 * size an older release had as its sizeof always ends at a field's end (or in the padding after one).
 * The lists follow tile.h: a field appended there goes at the end of its list; test_abi's
 * layouts_cover_their_structs checks that the fields of each list tile its struct with less than its
 * alignment between them and after the last, so a pointer or 64-bit field left out fails there. */
#include "runtime/rt.h"

#include <stddef.h>

#define RT_FIELD(T, f) {#f, offsetof(T, f), sizeof(((T *)0)->f)},
#define RT_LAYOUT(T, FIELDS)                                                                                  \
    static const RtField T##_fields[] = {FIELDS(RT_FIELD, T)};                                                \
    const RtLayout rt_layout_##T = {#T, sizeof(T), _Alignof(T), T##_fields, (int)(sizeof T##_fields / sizeof *T##_fields)};

#define COMPILE_OPTIONS_FIELDS(F, T) F(T, size) F(T, arch) F(T, kernel) F(T, defines) F(T, include_dirs) \
    F(T, specialize) F(T, no_align_ptrs) F(T, dump_after) F(T, time_passes) F(T, want_llvm_ir) F(T, tir_only) \
    F(T, want_cubin) F(T, ptxas) F(T, debug) F(T, num_sms) F(T, no_line_info) F(T, no_tma)
RT_LAYOUT(tile_compile_options, COMPILE_OPTIONS_FIELDS)
#define CONTEXT_OPTIONS_FIELDS(F, T) F(T, size) F(T, device) F(T, cache_dir) F(T, no_disk_cache) F(T, arch) \
    F(T, emu_host_threads) F(T, emu_racecheck) F(T, assume_files_unchanged) F(T, emu_timeout_seconds)
RT_LAYOUT(tile_context_options, CONTEXT_OPTIONS_FIELDS)
#define LAUNCH_OPTIONS_FIELDS(F, T) F(T, size) F(T, block) F(T, shared_bytes) F(T, programmatic_dependent_launch) \
    F(T, cluster) F(T, cooperative)
RT_LAYOUT(tile_launch_options, LAUNCH_OPTIONS_FIELDS)
#define GEMM_ARGS_FIELDS(F, T) F(T, size) F(T, m) F(T, n) F(T, k) F(T, a) F(T, lda) F(T, trans_a) F(T, b) F(T, ldb) \
    F(T, trans_b) F(T, c) F(T, ldc) F(T, in_dtype) F(T, out_dtype) F(T, alpha) F(T, beta) F(T, bias) F(T, activation) \
    F(T, stream) F(T, a_scale) F(T, b_scale) F(T, scale_mode)
RT_LAYOUT(tile_gemm_args, GEMM_ARGS_FIELDS)
#define MOE_ARGS_FIELDS(F, T) F(T, size) F(T, tokens) F(T, hidden) F(T, inter) F(T, experts) F(T, topk) F(T, dtype) \
    F(T, x) F(T, ldx) F(T, w1) F(T, w2) F(T, out) F(T, ldo) F(T, accumulate) F(T, router_logits) F(T, ldl) \
    F(T, logits_dtype) F(T, topk_ids) F(T, topk_weights) F(T, scoring) F(T, renormalize) F(T, n_group) \
    F(T, topk_group) F(T, group_top2) F(T, score_bias) F(T, routed_scale) F(T, workspace) F(T, workspace_bytes) \
    F(T, stream) F(T, weight_dtype) F(T, scales) F(T, w1_scale) F(T, w2_scale)
RT_LAYOUT(tile_moe_args, MOE_ARGS_FIELDS)
#define ATTENTION_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, batch) F(T, heads_q) F(T, heads_kv) F(T, head_dim) \
    F(T, seq_q) F(T, seq_k) F(T, q) F(T, k) F(T, v) F(T, o) F(T, q_stride) F(T, k_stride) F(T, v_stride) \
    F(T, o_stride) F(T, lse) F(T, cu_seqlens_q) F(T, cu_seqlens_k) F(T, total_q) F(T, total_k) F(T, softmax_scale) \
    F(T, causal) F(T, window_left) F(T, window_right) F(T, stream) F(T, q_scale) F(T, k_scale) F(T, v_scale) \
    F(T, o_dtype)
RT_LAYOUT(tile_attention_args, ATTENTION_ARGS_FIELDS)
#define PAGED_ATTENTION_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, kv_dtype) F(T, k_scale) F(T, v_scale) \
    F(T, num_seqs) F(T, heads_q) F(T, heads_kv) F(T, head_dim) F(T, num_tokens) F(T, block_size) F(T, num_blocks) \
    F(T, q) F(T, o) F(T, q_stride) F(T, o_stride) F(T, k_cache) F(T, v_cache) F(T, k_stride) F(T, v_stride) \
    F(T, block_tables) F(T, block_table_stride) F(T, context_lens) F(T, max_context_len) F(T, num_splits) \
    F(T, workspace) F(T, workspace_bytes) F(T, softmax_scale) F(T, check_tables) F(T, stream) F(T, tree_mask)
RT_LAYOUT(tile_paged_attention_args, PAGED_ATTENTION_ARGS_FIELDS)
#define NORM_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, tokens) F(T, hidden) F(T, x) F(T, ldx) F(T, residual) \
    F(T, ldr) F(T, weight) F(T, bias) F(T, eps) F(T, out) F(T, ldo) F(T, quant_dtype) F(T, scales) F(T, stream) \
    F(T, quant_group) F(T, lds)
RT_LAYOUT(tile_norm_args, NORM_ARGS_FIELDS)
#define GATED_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, act) F(T, tokens) F(T, d) F(T, x) F(T, ldx) F(T, out) \
    F(T, ldo) F(T, quant_dtype) F(T, scales) F(T, stream) F(T, quant_group) F(T, lds)
RT_LAYOUT(tile_gated_args, GATED_ARGS_FIELDS)
#define SAMPLE_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, batch) F(T, vocab) F(T, logits) F(T, ld) \
    F(T, temperature) F(T, temperature_value) F(T, top_k) F(T, top_k_value) F(T, top_p) F(T, top_p_value) F(T, min_p) \
    F(T, min_p_value) F(T, seed) F(T, seed_value) F(T, offset) F(T, offset_value) F(T, out_dtype) F(T, out) \
    F(T, probs) F(T, ldp) F(T, stream)
RT_LAYOUT(tile_sample_args, SAMPLE_ARGS_FIELDS)
#define SPEC_VERIFY_ARGS_FIELDS(F, T) F(T, size) F(T, batch) F(T, num_draft) F(T, vocab) F(T, draft_tokens) \
    F(T, draft_probs) F(T, target_probs) F(T, greedy) F(T, greedy_value) F(T, seed) F(T, seed_value) F(T, offset) \
    F(T, offset_value) F(T, accepted) F(T, out_tokens) F(T, stream)
RT_LAYOUT(tile_spec_verify_args, SPEC_VERIFY_ARGS_FIELDS)
#define ROPE_ARGS_FIELDS(F, T) F(T, size) F(T, dtype) F(T, style) F(T, tokens) F(T, heads_q) F(T, heads_kv) \
    F(T, head_dim) F(T, rot_dim) F(T, q) F(T, ldq) F(T, k) F(T, ldk) F(T, v) F(T, ldv) F(T, q_out) F(T, ldq_out) \
    F(T, k_out) F(T, ldk_out) F(T, positions) F(T, positions_dtype) F(T, cos_sin) F(T, cos_sin_dtype) \
    F(T, max_position) F(T, k_cache) F(T, v_cache) F(T, k_stride) F(T, v_stride) F(T, num_blocks) F(T, block_size) \
    F(T, slot_mapping) F(T, slot_dtype) F(T, kv_dtype) F(T, k_scale) F(T, v_scale) F(T, k_scales) F(T, v_scales) \
    F(T, check_indices) F(T, stream)
RT_LAYOUT(tile_rope_args, ROPE_ARGS_FIELDS)

/* The structs the library writes into, up to the caller's size (no size field: the size is an argument) */
#define CONTEXT_STATS_FIELDS(F, T) F(T, memory_hits) F(T, disk_hits) F(T, compiles) F(T, launches) F(T, compile_seconds) \
    F(T, load_seconds) F(T, allocations) F(T, frees) F(T, synchronizations)
RT_LAYOUT(tile_context_stats, CONTEXT_STATS_FIELDS)
#define DEVICE_PROPERTIES_FIELDS(F, T) F(T, name) F(T, arch) F(T, is_emulator) F(T, max_threads_per_block) \
    F(T, max_shared_per_block) F(T, multiprocessor_count)
RT_LAYOUT(tile_device_properties, DEVICE_PROPERTIES_FIELDS)
const RtLayout *const rt_out_layouts[] = {&rt_layout_tile_context_stats, &rt_layout_tile_device_properties, NULL};

const RtLayout *const rt_layouts[] = {&rt_layout_tile_compile_options, &rt_layout_tile_context_options, &rt_layout_tile_launch_options,
                                      &rt_layout_tile_gemm_args, &rt_layout_tile_moe_args, &rt_layout_tile_attention_args,
                                      &rt_layout_tile_paged_attention_args, &rt_layout_tile_norm_args, &rt_layout_tile_gated_args,
                                      &rt_layout_tile_sample_args, &rt_layout_tile_spec_verify_args, &rt_layout_tile_rope_args,
                                      NULL};
