// SPDX-License-Identifier: Apache-2.0
// Size baseline (a): an empty firmware program, the C library's startup only.
int main() { return 0; }
