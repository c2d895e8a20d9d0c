import subprocess, re, sys
def gen(arch, objdump, nm, obj, binf, goarch, machine, mname):
    out = subprocess.run([objdump, '-d', '-z', obj], capture_output=True, text=True).stdout
    syms = {}
    for l in subprocess.run([nm, obj], capture_output=True, text=True).stdout.splitlines():
        a, t, n = l.split()
        syms[n] = int(a, 16)
    code = open(binf,'rb').read()
    data = syms['mask']
    body = []
    covered = 0
    for l in out.splitlines():
        m = re.match(r'\s+([0-9a-f]+):\s+((?:[0-9a-f]{2} )+|[0-9a-f]{8} )\s*(.*)', l)
        if not m: continue
        off = int(m.group(1),16)
        if off >= data: break
        n = 4 if arch == 'arm64' else len(m.group(2).split())
        ins = m.group(3)
        ins = ins.split('//')[0] if arch == 'arm64' else ins.split('#')[0]
        ins = re.sub(r'\s+', ' ', ins.strip())
        ins = re.sub(r' <.*>', '', ins)
        body.append('\t' + ', '.join('0x%02x' % b for b in code[off:off+n]) + ', // %#04x: ' % off + ins)
        covered = off + n
    if covered < data:
        body.append('\t' + ', '.join('0x%02x' % b for b in code[covered:data]) + ', // padding')
    order = sorted((a, n) for n, a in syms.items() if a >= data)
    what = {'mask': 'mask: every signal', 'name': 'name: "corral-shim"', 'one': 'one: "1"'}
    for i, (a, n) in enumerate(order):
        end = order[i+1][0] if i+1 < len(order) else len(code)
        body.append('\t' + ', '.join('0x%02x' % b for b in code[a:end]) + ', // %#04x: ' % a + what[n])
    print(f'''package guardelf

// The guardian's machine code for linux/{goarch}: testdata/guardian_{goarch}.S
// assembled (TestCodeIsItsSourceAssembled checks it), one instruction a
// line, then its data.
const machine = {machine} // {mname}

var code = []byte{{''')
    print('\n'.join(body))
    print('}')
gen(*sys.argv[1:])
