# Accepts connections, reads requests, never answers.
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(128)
conns = []
def drain(c):
    try:
        while c.recv(65536): pass
    except OSError: pass
while True:
    c, _ = s.accept(); conns.append(c)
    threading.Thread(target=drain, args=(c,), daemon=True).start()
