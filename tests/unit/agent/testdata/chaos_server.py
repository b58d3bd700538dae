# A deliberately faulty HTTP/1.1 server for capturing load-generator error output.
# Per request (global count n): n%10==3 answers 200 after 1.5 s (late: a timeout under a 1 s
# timeout), n%10==7 resets the connection (RST), n%10==9 answers 503; others 200 at once.
# After CLOSE_AFTER seconds from the first connection, the listener closes (connects fail).
import socket, sys, threading, time, struct
port = int(sys.argv[1]); close_after = float(sys.argv[2]) if len(sys.argv) > 2 else 1e9
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port)); s.listen(128)
lock = threading.Lock(); count = [0]
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
BAD = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 5\r\n\r\nbusy\n"
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
            buf = buf[cl:]
            with lock:
                n = count[0]; count[0] += 1
            if n % 10 == 3:
                time.sleep(1.5); c.sendall(OK)
            elif n % 10 == 7:
                c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                c.close(); return
            elif n % 10 == 9:
                c.sendall(BAD)
            else:
                c.sendall(OK)
    except OSError:
        pass
    finally:
        try: c.close()
        except OSError: pass
first = None
s.settimeout(0.05)
while True:
    if first is not None and time.time() - first > close_after:
        s.close(); break
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    if first is None: first = time.time()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
while True: time.sleep(1)
