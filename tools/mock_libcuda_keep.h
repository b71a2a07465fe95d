/* The mock driver's allocations (included by mock_libcuda.c). */
/* Every modelled object stays reachable from here (the mock frees nothing: a destroyed one keeps
 * its memory, so a stale handle is caught), so LeakSanitizer reports only the caller's leaks. */
static void** kept; static size_t nkept, capkept;
static void* keep(void* p) {
  if (nkept == capkept) kept = realloc(kept, (capkept = 2 * capkept + 64) * sizeof *kept);
  return kept[nkept++] = p;
}
