#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Firmware size report: .text/.data/.bss of the size programs, read from their ELF section
headers, and the cost of devrt over an empty program. Writes JSON (--json) and fails when
(b) - (a) .text exceeds the budget by more than the allowed margin (sizes are deterministic).

Usage: size_report.py --budget size_budget.json [--json OUT] empty=ELF round_trip=ELF kernel_launch=ELF
"""
import argparse
import json
import struct
import sys

SECTIONS = ('.text', '.data', '.bss')


def section_sizes(path):
    data = open(path, 'rb').read()
    if data[:4] != b'\x7fELF':
        sys.exit(f'{path}: not an ELF file')
    is64 = data[4] == 2
    endian = '<' if data[5] == 1 else '>'
    if is64:
        shoff = struct.unpack_from(endian + 'Q', data, 40)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 58)
        header, size_at = endian + 'IIQQQQ', 5
    else:
        shoff = struct.unpack_from(endian + 'I', data, 32)[0]
        shentsize, shnum, shstrndx = struct.unpack_from(endian + 'HHH', data, 46)
        header, size_at = endian + 'IIIIII', 5
    headers = [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    sizes = dict.fromkeys(SECTIONS, 0)
    for h in headers:
        start = names_offset + h[0]
        name = data[start:data.index(b'\0', start)].decode()
        if name in sizes:
            sizes[name] = h[size_at]
    return sizes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--budget', required=True)
    parser.add_argument('--json')
    parser.add_argument('programs', nargs='+', help='name=ELF')
    args = parser.parse_args()
    budget = json.load(open(args.budget))
    programs = dict(p.split('=', 1) for p in args.programs)
    sizes = {name: section_sizes(path) for name, path in programs.items()}

    print(f'{"program":<16}' + ''.join(f'{s:>10}' for s in SECTIONS))
    for name, s in sizes.items():
        print(f'{name:<16}' + ''.join(f'{s[k]:>10}' for k in SECTIONS))
    deltas = {}
    for name in ('round_trip', 'kernel_launch'):
        deltas[name] = {k: sizes[name][k] - sizes['empty'][k] for k in SECTIONS}
        print(f'{name} - empty: ' + ', '.join(f'{k} {v:+d}' for k, v in deltas[name].items()))

    cost = deltas['round_trip']['.text']
    limit = budget['budget_text_bytes'] * (1 + budget['allowed_excess_percent'] / 100)
    goal = budget['goal_text_bytes']
    print(f'(b) - (a) .text: {cost} bytes; goal {goal}, budget {budget["budget_text_bytes"]}, '
          f'fails above {limit:.0f}')
    if args.json:
        json.dump({'sizes': sizes, 'delta_over_empty': deltas, 'budget': budget,
                   'round_trip_text_bytes': cost, 'within_goal': cost <= goal}, open(args.json, 'w'), indent=2)
    if cost > limit:
        sys.exit(f'FAIL: core + CPU round trip costs {cost} bytes of .text, over {limit:.0f}')


if __name__ == '__main__':
    main()
