// Package handshake reads the connection id a MySQL-protocol server announces in the first
// packet it sends, so that a dialer watching the socket knows a session's id (for KILL QUERY, or
// to tell its own sessions from others') without asking the server.
package handshake

import "encoding/binary"

// Result says whether the bytes read so far answer the question.
type Result int

const (
	// More means the bytes are a prefix of a handshake: read more and ask again.
	More Result = iota
	// Found means the connection id is known.
	Found
	// Unknown means the first packet is not a HandshakeV10 (an error packet, another protocol):
	// there is no id to read.
	Unknown
)

// header is the length of a packet header: 3 bytes of length, 1 of sequence number.
const header = 4

// maxVersion bounds the server version string; a longer one means the packet is not a
// handshake.
const maxVersion = 512

// ConnectionID reads the connection id out of head, the first bytes a server sent: a
// HandshakeV10 packet is a 4-byte header, protocol version 10, the NUL-terminated server
// version, then the 4-byte little-endian connection id.
func ConnectionID(head []byte) (uint32, Result) {
	if len(head) < header+1 {
		return 0, More
	}
	if head[header] != 10 {
		return 0, Unknown
	}
	for i := header + 1; i < len(head); i++ {
		if head[i] == 0 {
			if len(head) < i+5 {
				return 0, More
			}
			return binary.LittleEndian.Uint32(head[i+1 : i+5]), Found
		}
	}
	if len(head) > header+1+maxVersion {
		return 0, Unknown
	}
	return 0, More
}
