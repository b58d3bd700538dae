# Answers 200 to every request and appends each raw request (head + body) to a file, repr'd.
import socket, sys, threading
port = int(sys.argv[1]); out = open(sys.argv[2], "a")
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(128)
lock = threading.Lock()
def serve(c):
    buf = b""
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d: return
                buf += d
            head, _, buf = buf.partition(b"\r\n\r\n")
            cl = 0
            for line in head.split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length": cl = int(v)
            while len(buf) < cl:
                d = c.recv(65536)
                if not d: return
                buf += d
            body, buf = buf[:cl], buf[cl:]
            with lock:
                out.write(repr(head + b"\r\n\r\n" + body) + "\n"); out.flush()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
