# Answers every 5th request on a connection with bytes that are not HTTP; 200 otherwise.
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(128)
OK = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"
def serve(c):
    buf = b""; n = 0
    try:
        while True:
            while b"\r\n\r\n" not in buf:
                d = c.recv(65536)
                if not d: return
                buf += d
            _, _, buf = buf.partition(b"\r\n\r\n")
            n += 1
            c.sendall(b"NOT HTTP AT ALL\r\n\r\n" if n % 5 == 0 else OK)
    except OSError: pass
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
