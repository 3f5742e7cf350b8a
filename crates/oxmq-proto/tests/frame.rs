//! ZMTP 3.x framing: header forms, flags, limits, streaming.

use bytes::BytesMut;
use oxmq_proto::{encode_frame, encode_frame_header, frame_header_len, FrameDecoder, ProtocolError};

fn decode_all(bytes: &[u8]) -> (Vec<oxmq_proto::Frame>, BytesMut) {
    let mut buf = BytesMut::from(bytes);
    let mut dec = FrameDecoder::new(None);
    let mut frames = Vec::new();
    while let Some(f) = dec.decode(&mut buf).unwrap() {
        frames.push(f);
    }
    (frames, buf)
}

#[test]
fn short_message_header_is_00_len() {
    let mut out = Vec::new();
    encode_frame(&mut out, false, false, b"hello");
    assert_eq!(out, [0x00, 5, b'h', b'e', b'l', b'l', b'o']);
}

#[test]
fn short_message_with_more_is_01() {
    let mut out = Vec::new();
    encode_frame_header(&mut out, true, false, 3);
    assert_eq!(out, [0x01, 3]);
}

#[test]
fn short_command_header_is_04() {
    let mut out = Vec::new();
    encode_frame_header(&mut out, false, true, 10);
    assert_eq!(out, [0x04, 10]);
}

#[test]
fn frame_of_255_bytes_uses_short_form() {
    let mut out = Vec::new();
    encode_frame_header(&mut out, false, false, 255);
    assert_eq!(out, [0x00, 0xFF]);
    assert_eq!(frame_header_len(255), 2);
}

#[test]
fn frame_of_256_bytes_uses_long_form_02() {
    let mut out = Vec::new();
    encode_frame_header(&mut out, false, false, 256);
    assert_eq!(out, [0x02, 0, 0, 0, 0, 0, 0, 1, 0]);
    assert_eq!(frame_header_len(256), 9);
}

#[test]
fn long_frame_with_more_is_03_and_long_command_is_06() {
    let mut out = Vec::new();
    encode_frame_header(&mut out, true, false, 300);
    assert_eq!(out[0], 0x03);
    out.clear();
    encode_frame_header(&mut out, false, true, 300);
    assert_eq!(out, [0x06, 0, 0, 0, 0, 0, 0, 1, 44]);
}

#[test]
fn can_round_trip_frames_around_the_255_boundary() {
    for len in [0usize, 1, 254, 255, 256, 257, 70_000] {
        let body: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut out = Vec::new();
        encode_frame(&mut out, len % 2 == 0, false, &body);
        assert_eq!(out.len(), frame_header_len(len) + len);
        let (frames, rest) = decode_all(&out);
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].body[..], body[..]);
        assert_eq!(frames[0].more, len % 2 == 0);
        assert!(!frames[0].command);
        assert!(rest.is_empty());
    }
}

#[test]
fn decodes_multipart_more_flags() {
    let (frames, _) = decode_all(&[0x01, 1, b'a', 0x01, 0, 0x00, 1, b'c']);
    let flags: Vec<bool> = frames.iter().map(|f| f.more).collect();
    assert_eq!(flags, [true, true, false]);
    assert!(frames[1].body.is_empty(), "zero-length frames are valid");
}

#[test]
fn accepts_long_form_for_small_sizes() {
    // libzmq never sends this, but the spec allows it.
    let (frames, _) = decode_all(&[0x02, 0, 0, 0, 0, 0, 0, 0, 2, b'h', b'i']);
    assert_eq!(&frames[0].body[..], b"hi");
}

#[test]
fn rejects_reserved_flag_bits() {
    for flags in [0x08u8, 0x10, 0x20, 0x40, 0x80, 0xF8] {
        let mut buf = BytesMut::from(&[flags, 0][..]);
        assert_eq!(FrameDecoder::new(None).decode(&mut buf), Err(ProtocolError::ReservedFlagBits { flags }));
    }
}

#[test]
fn rejects_reserved_flag_bits_before_size_arrives() {
    let mut buf = BytesMut::from(&[0x20][..]);
    assert!(FrameDecoder::new(None).decode(&mut buf).is_err());
}

#[test]
fn rejects_command_with_more() {
    let mut buf = BytesMut::from(&[0x05, 0][..]);
    assert_eq!(FrameDecoder::new(None).decode(&mut buf), Err(ProtocolError::CommandWithMore));
}

#[test]
fn rejects_long_size_with_top_bit_set() {
    let mut buf = BytesMut::from(&[0x02, 0x80, 0, 0, 0, 0, 0, 0, 0][..]);
    assert_eq!(FrameDecoder::new(None).decode(&mut buf), Err(ProtocolError::FrameTooLong { size: 1 << 63 }));
}

#[test]
fn rejects_frame_over_max_msg_size_before_body_arrives() {
    let mut dec = FrameDecoder::new(Some(4));
    let mut ok = BytesMut::from(&[0x00, 4, 1, 2, 3, 4][..]);
    assert!(dec.decode(&mut ok).unwrap().is_some());
    // Only the header of a 5-byte body: refused already.
    let mut buf = BytesMut::from(&[0x00, 5][..]);
    assert_eq!(dec.decode(&mut buf), Err(ProtocolError::MessageTooLarge { size: 5, max: 4 }));
    let mut long = BytesMut::from(&[0x02, 0, 0, 0, 0, 0x10, 0, 0, 0][..]);
    assert!(matches!(dec.decode(&mut long), Err(ProtocolError::MessageTooLarge { .. })));
}

#[test]
fn max_msg_size_is_per_frame() {
    let mut dec = FrameDecoder::new(Some(3));
    let mut buf = BytesMut::from(&[0x01, 3, 1, 2, 3, 0x00, 3, 4, 5, 6][..]);
    assert!(dec.decode(&mut buf).unwrap().is_some());
    assert!(dec.decode(&mut buf).unwrap().is_some());
}

#[test]
fn rejects_truncated_frames_by_waiting() {
    let whole = [0x02, 0, 0, 0, 0, 0, 0, 1, 0];
    let mut dec = FrameDecoder::new(None);
    for cut in 0..whole.len() {
        let mut buf = BytesMut::from(&whole[..cut]);
        assert_eq!(dec.decode(&mut buf), Ok(None));
        assert_eq!(buf.len(), cut, "a partial header must not be consumed");
        assert_eq!(dec.pending_frame_len(&buf), None);
    }
    let mut buf = BytesMut::from(&whole[..]);
    assert_eq!(dec.pending_frame_len(&buf), Some(9 + 256));
    buf.extend_from_slice(&[0u8; 255]);
    assert_eq!(dec.decode(&mut buf), Ok(None));
    buf.extend_from_slice(&[0u8]);
    assert_eq!(dec.decode(&mut buf).unwrap().unwrap().body.len(), 256);
}

#[test]
fn byte_at_a_time_decoding_matches_bulk() {
    let mut wire = Vec::new();
    encode_frame(&mut wire, true, false, b"k");
    encode_frame(&mut wire, false, false, &[7u8; 300]);
    encode_frame(&mut wire, false, true, b"\x04PING\x00\x00");
    let (bulk, _) = decode_all(&wire);
    let mut dec = FrameDecoder::new(None);
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    for &b in &wire {
        buf.extend_from_slice(&[b]);
        while let Some(f) = dec.decode(&mut buf).unwrap() {
            got.push(f);
        }
    }
    assert_eq!(got, bulk);
    assert_eq!(got.len(), 3);
}

#[test]
fn decoded_body_shares_receive_buffer() {
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(&[0x00, 3, b'a', b'b', b'c', 0x00]);
    let base = buf.as_ptr() as usize;
    let f = FrameDecoder::new(None).decode(&mut buf).unwrap().unwrap();
    assert_eq!(f.body.as_ptr() as usize, base + 2, "body must not be copied");
    assert_eq!(&buf[..], &[0x00]);
}

/// `complete_header` agrees with `decode` byte by byte: nothing until the
/// whole frame is there, then the same flags and body, and nothing consumed.
#[test]
fn complete_header_waits_for_the_whole_frame_and_consumes_nothing() {
    let mut wire = Vec::new();
    encode_frame(&mut wire, true, false, b"abc");
    encode_frame(&mut wire, false, true, &[7u8; 300]);
    let dec = FrameDecoder::new(None);
    for cut in 0..5 {
        assert_eq!(dec.complete_header(&wire[..cut]).unwrap(), None, "cut at {cut}");
    }
    let h = dec.complete_header(&wire[..5]).unwrap().expect("whole first frame");
    assert_eq!((h.header_len, h.body_len, h.more, h.command), (2, 3, true, false));
    let second = &wire[5..];
    assert_eq!(dec.complete_header(&second[..second.len() - 1]).unwrap(), None);
    let h = dec.complete_header(second).unwrap().expect("whole second frame");
    assert_eq!((h.header_len, h.body_len, h.more, h.command), (9, 300, false, true));
    let (frames, rest) = decode_all(&wire);
    assert_eq!(frames.len(), 2);
    assert!(rest.is_empty());
}

#[test]
fn complete_header_reports_bad_headers_as_decode_does() {
    let mut dec = FrameDecoder::new(Some(10));
    let mut wire = Vec::new();
    encode_frame(&mut wire, false, false, &[1u8; 11]);
    assert!(matches!(dec.complete_header(&wire), Err(ProtocolError::MessageTooLarge { .. })));
    assert!(matches!(dec.decode(&mut BytesMut::from(&wire[..])), Err(ProtocolError::MessageTooLarge { .. })));
    assert!(dec.complete_header(&[0x80, 1, 0]).is_err(), "reserved flag bits");
}

/// The short-data fast path answers only where `complete_header` would give
/// the same header, and answers for every complete short data frame within
/// the size limit: every flags octet, sizes around the limit, every cut.
#[test]
fn complete_short_data_agrees_with_complete_header() {
    for max in [None, Some(5)] {
        let dec = FrameDecoder::new(max);
        for flags in 0..=255u8 {
            for size in [0u8, 3, 5, 6, 255] {
                let mut wire = vec![flags, size];
                wire.resize(usize::from(size) + 3, 9);
                for cut in 0..wire.len() {
                    let buf = &wire[..cut];
                    let fast = dec.complete_short_data(buf);
                    if let Some(h) = fast {
                        assert_eq!(dec.complete_header(buf).ok().flatten(), Some(h), "{flags:#x} {size} {cut}");
                    }
                    let short_data = flags & !0x01 == 0;
                    let complete = cut >= 2 + usize::from(size);
                    let within = match max {
                        Some(m) => u64::from(size) <= m,
                        None => true,
                    };
                    assert_eq!(fast.is_some(), short_data && complete && within, "{flags:#x} {size} {cut} {max:?}");
                }
            }
        }
    }
    assert_eq!(FrameDecoder::zmtp10(None).complete_short_data(&[4, 0, b'a', b'b', b'c']), None, "ZMTP/1.0 framing");
}
