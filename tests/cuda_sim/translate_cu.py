#!/usr/bin/env python3
"""Rewrites a CUDA source of kernels/cuda for cuda_sim (tests/cuda_sim/cuda_sim.h), keeping its
lines where they are (a #line directive names the original file, so compiler messages and test
failures point at it):

  kernel<T><<<grid, block, smem, stream>>>(args)
      -> ::cuda_sim::launch([&](auto... a) { kernel<T>(a...); }, grid, block, smem, stream)(args)
  __shared__ float name[A][B];
      -> auto& name = ::cuda_sim::shared<float[A][B], SITE>();
  extern __shared__ T name[];
      -> T* name = ::cuda_sim::dynamic_shared<T>();

Usage: translate_cu.py SOURCE OUTPUT DISPLAY_NAME. Exits 1 naming the line of any <<< it cannot
parse, or of a __shared__ declaration of another form."""
import re
import sys
import zlib


def launch_callee_start(text, i):
    """Start of the callee expression that ends right before text[i] (the '<<<')."""
    j = i
    while True:
        while j > 0 and text[j - 1].isspace():
            j -= 1
        if j > 0 and text[j - 1] == '>':  # template arguments: skip to the matching '<'
            depth = 0
            while j > 0:
                j -= 1
                if text[j] == '>':
                    depth += 1
                elif text[j] == '<':
                    depth -= 1
                    if depth == 0:
                        break
            continue
        k = j
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] in '_:'):
            k -= 1
        if k == j:
            return j
        j = k
        # An identifier; a further '>' before it would belong to something else.
        return j


def matching(text, i, open_ch, close_ch):
    depth = 0
    for k in range(i, len(text)):
        if text[k] == open_ch:
            depth += 1
        elif text[k] == close_ch:
            depth -= 1
            if depth == 0:
                return k
    return -1


def translate_launches(text, name):
    out, pos = [], 0
    while True:
        i = text.find('<<<', pos)
        if i < 0:
            out.append(text[pos:])
            return ''.join(out)
        start = launch_callee_start(text, i)
        callee = text[start:i].rstrip()
        end_cfg = text.find('>>>', i)
        line = text.count('\n', 0, i) + 1
        if not callee or end_cfg < 0:
            sys.exit(f'{name}:{line}: cannot parse this kernel launch')
        config = text[i + 3:end_cfg]
        k = end_cfg + 3
        while k < len(text) and text[k].isspace():
            k += 1
        if k >= len(text) or text[k] != '(':
            sys.exit(f'{name}:{line}: no argument list after >>>')
        out.append(text[pos:start])
        out.append(f'::cuda_sim::launch([&](auto... cuda_sim_a) {{ {callee}(cuda_sim_a...); }},'
                   f'{config})')
        # Keep the newlines the callee and the launch configuration spanned.
        out.append('\n' * text.count('\n', start, i))
        pos = k


SHARED = re.compile(r'(?<![\w])(extern\s+)?__shared__\s+([^;\[\]]*?)\s*(\w+)\s*((?:\[[^\]]*\])+)\s*;')


def translate_shared(text, name):
    def replace(m):
        line = text.count('\n', 0, m.start()) + 1
        extern, type_, var, dims = m.group(1), m.group(2).strip(), m.group(3), m.group(4)
        if extern:
            if dims.replace(' ', '') != '[]':
                sys.exit(f'{name}:{line}: extern __shared__ with a size')
            return f'{type_}* {var} = ::cuda_sim::dynamic_shared<{type_}>();'
        site = zlib.crc32(f'{name}:{line}:{var}'.encode())
        return f'auto& {var} = ::cuda_sim::shared<{type_}{dims}, {site}ull>();'

    result = SHARED.sub(replace, text)
    for n, line in enumerate(result.split('\n'), 1):
        if re.search(r'(?<![\w"])__shared__', line) and not line.lstrip().startswith('//'):
            sys.exit(f'{name}:{n}: a __shared__ declaration cuda_sim cannot translate')
    return result


def main():
    if len(sys.argv) != 4:
        sys.exit('usage: translate_cu.py SOURCE OUTPUT DISPLAY_NAME')
    source, output, display = sys.argv[1:]
    with open(source, encoding='utf-8') as f:
        text = f.read()
    text = translate_shared(translate_launches(text, display), display)
    with open(output, 'w', encoding='utf-8') as f:
        f.write(f'#line 1 "{display}"\n{text}')


if __name__ == '__main__':
    main()
