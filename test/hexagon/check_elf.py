#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that a linked DSP-side program is a static Hexagon executable holding devrt's CPU
backend: ELF32, e_machine EM_HEXAGON (164), ET_EXEC, and the cpu backend's table in its symbol
table. Usage: check_elf.py ELF"""
import struct
import sys

EM_HEXAGON = 164
ET_EXEC = 2


def symbols(data, shoff, shentsize, shnum):
    sections = [struct.unpack_from('<IIIIIIIIII', data, shoff + i * shentsize) for i in range(shnum)]
    for name, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab = sections[link]
        for i in range(size // entsize):
            st_name = struct.unpack_from('<I', data, offset + i * entsize)[0]
            start = strtab[4] + st_name
            yield data[start:data.index(b'\0', start)].decode()


def main():
    data = open(sys.argv[1], 'rb').read()
    problems = []
    if data[:4] != b'\x7fELF' or data[4] != 1:
        sys.exit(f'{sys.argv[1]}: not an ELF32 file')
    e_type, e_machine = struct.unpack_from('<HH', data, 16)
    shoff = struct.unpack_from('<I', data, 32)[0]
    shentsize, shnum = struct.unpack_from('<HH', data, 46)
    if e_machine != EM_HEXAGON:
        problems.append(f'e_machine is {e_machine}, not EM_HEXAGON ({EM_HEXAGON})')
    if e_type != ET_EXEC:
        problems.append(f'e_type is {e_type}, not ET_EXEC')
    names = set(symbols(data, shoff, shentsize, shnum))
    for wanted in ['devrt_backend_table_cpu', 'main']:
        if wanted not in names:
            problems.append(f'no symbol {wanted}')
    if problems:
        sys.exit(f'{sys.argv[1]}: ' + '; '.join(problems))
    print(f'{sys.argv[1]}: Hexagon static executable, {len(data)} bytes, devrt cpu backend linked')


if __name__ == '__main__':
    main()
