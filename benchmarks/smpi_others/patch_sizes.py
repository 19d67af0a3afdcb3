"""Give two NAS kernels of SimGrid's examples/smpi/NAS a numeric size knob (applied to the temporary copy only).

The sources pick their size from a class letter (S, W, A, B, ...), too few and too far apart for a sweep.
Each patch adds one environment variable that overrides the class's size and nothing else:
  ep.c: NPB_EP_M   -> m (the run generates 2^m pairs of random numbers; class S is m = 24, W 25)
  is.c: NPB_IS_LOG2 -> total_keys_log2 = k, max_key_log_2 = k - 4, num_bucket_log_2 = 10 (the ratios of
        classes W, A, B; class W is k = 20, A 23)
Verification then fails for non-class sizes (the programs still run to the end and print it); timings are unaffected.
Usage: python3 patch_sizes.py DIR  (DIR holds ep.c and is.c)
"""
import sys
from pathlib import Path


def patch(path, old, new):
    text = path.read_text()
    if text.count(old) != 1:
        sys.exit(f"patch_sizes: anchor not found exactly once in {path}: {old!r}")
    path.write_text(text.replace(old, new))


def main():
    d = Path(sys.argv[1])
    patch(d / "ep.c", "  if      (class == 'S')",
          "  if (getenv(\"NPB_EP_M\"))\n    { m = atoi(getenv(\"NPB_EP_M\")); }\n  else if (class == 'S')")
    patch(d / "is.c", "  total_keys  = (1 << total_keys_log2);",
          "  if (getenv(\"NPB_IS_LOG2\")) {\n    total_keys_log2 = atoi(getenv(\"NPB_IS_LOG2\"));\n"
          "    max_key_log_2 = total_keys_log2 - 4;\n    num_bucket_log_2 = 10;\n  }\n"
          "  total_keys  = (1 << total_keys_log2);")


if __name__ == "__main__":
    main()
