import re,sys,collections
# usage: perf script -F comm,pid,tid,ip,sym,dso | python3 prof.py [thread-substring] 
data=sys.stdin.read().split('\n\n')
by_thread=collections.Counter(); by_sym=collections.defaultdict(collections.Counter); n=0
for s in data:
    ls=[l for l in s.strip().split('\n') if l.strip()]
    if not ls: continue
    hdr=ls[0].split()
    comm=re.match(r'^\s*(.+?)\s+\d+/?\d*\s',ls[0])
    comm=comm.group(1) if comm else hdr[0]
    if len(ls)<2: continue
    f=ls[1].strip()
    f=re.sub(r'^[0-9a-f]+ ','',f)
    sym=re.sub(r'\+0x[0-9a-f]+','',f)
    n+=1; by_thread[comm]+=1; by_sym[comm][sym[:140]]+=1
print("samples",n)
for t,c in by_thread.most_common(15): print(f"{100*c/n:5.1f} {t}")
for t,_ in by_thread.most_common(4):
    tot=by_thread[t]; print("\n==",t,tot)
    for s,c in by_sym[t].most_common(int(sys.argv[1]) if len(sys.argv)>1 else 30): print(f"{100*c/tot:5.1f} {s}")
