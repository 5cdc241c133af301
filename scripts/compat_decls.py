import re
def decls(path, api=r'(?:GGML_API|GGML_BACKEND_API)'):
    s=open(path).read()
    s=re.sub(r'/\*.*?\*/','',s,flags=re.S); s=re.sub(r'//[^\n]*','',s)
    out=[]
    if api:
        # GGML_DEPRECATED(GGML_API ret name(params), "hint");
        for m in re.finditer(r'GGML_DEPRECATED\(\s*'+api+r'\s+([^;]*?\))\s*,\s*"[^"]*"\s*\)\s*;',s):
            out.append(('dep',m.group(1)))
        s2=re.sub(r'GGML_DEPRECATED\(\s*'+api+r'\s+([^;]*?\))\s*,\s*"[^"]*"\s*\)\s*;','',s)
        for m in re.finditer(api+r'\s+([^;{}]*?\))\s*;',s2):
            out.append(('',m.group(1)))
    else:
        for m in re.finditer(r'^\s*((?:const\s+)?(?:struct\s+|enum\s+)?\w+[\s\*]+\s*gk_\w+\s*\([^;{}]*?\))\s*;',s,flags=re.M):
            out.append(('',m.group(1)))
    res=[]
    for kind,d in out:
        d=' '.join(d.split())
        d=re.sub(r'GGML_ATTRIBUTE_FORMAT\([^)]*\)','',d)
        d=d.replace('GGML_NORETURN','').strip()
        m=re.match(r'(.*?)\b(\w+)\s*\((.*)\)$',d)
        if not m: print('??',d); continue
        ret,name,params=m.group(1).strip(),m.group(2),m.group(3).strip()
        res.append(dict(ret=ret,name=name,params=params,dep=kind=='dep'))
    return res
def split_params(p):
    if p in ('','void'): return []
    parts=[];depth=0;cur=''
    for ch in p:
        if ch=='(' : depth+=1
        if ch==')' : depth-=1
        if ch==',' and depth==0: parts.append(cur.strip());cur=''
        else: cur+=ch
    parts.append(cur.strip()); return parts
def pname(p):
    if '(' in p:  # function pointer
        m=re.search(r'\(\s*\*\s*(\w+)\s*\)',p); return m.group(1) if m else None
    if p=='...': return '...'
    m=re.search(r'(\w+)\s*(\[[^\]]*\])?$',p); return m.group(1)
