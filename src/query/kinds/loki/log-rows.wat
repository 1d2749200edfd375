;; Loki log rows read from an answer's bytes with 16-byte vectors: the plain rows of a streams
;; answer's `values` (`["<1 to 19 digits>","<line>"]`), written out as the log frame's `Line` and
;; `tsNs` columns, with each line's text (its escapes decoded) kept for its hash. Any row it does not
;; take as it is (other escapes, raw bytes above 0x7f or below 0x20, more elements, no room left)
;; it stops before, and the caller reads that row its own way. `log-rows.ts` lays out the memory
;; and says what each region holds. Built into `log-rows.wasm.ts` by `bin/build-wasm.js`.
(module
  (memory (export "memory") 1)

  ;; Bytes 0 to 255: what a short escape's letter stands for (0: not one the SDK writes).
  ;; Bytes 256 to 511: a lowercase hex digit's value (0xff: not one).
  ;; Bytes 512 to 527: where `rows` stopped and how far it wrote, as four i32 (read from memory:
  ;; a global's value costs the caller far more to read, once per call).

  ;; The regions as they stand after the last whole row: where to read on, and each region's end.
  (func $commit (param $i i32) (param $lines i32) (param $times i32) (param $rows i32)
    (i32.store offset=512 (i32.const 0) (local.get $i))
    (i32.store offset=516 (i32.const 0) (local.get $lines))
    (i32.store offset=520 (i32.const 0) (local.get $times))
    (i32.store offset=524 (i32.const 0) (local.get $rows)))

  ;; The four lowercase hex digits from $i as a number, -1 when one is not.
  (func $hex4 (param $i i32) (result i32)
    (local $a i32) (local $b i32) (local $c i32) (local $d i32)
    (local.set $a (i32.load8_u offset=256 (i32.load8_u (local.get $i))))
    (local.set $b (i32.load8_u offset=256 (i32.load8_u offset=1 (local.get $i))))
    (local.set $c (i32.load8_u offset=256 (i32.load8_u offset=2 (local.get $i))))
    (local.set $d (i32.load8_u offset=256 (i32.load8_u offset=3 (local.get $i))))
    (if (i32.gt_u (i32.or (i32.or (local.get $a) (local.get $b)) (i32.or (local.get $c) (local.get $d))) (i32.const 15))
      (then (return (i32.const -1))))
    (i32.or
      (i32.or (i32.shl (local.get $a) (i32.const 12)) (i32.shl (local.get $b) (i32.const 8)))
      (i32.or (i32.shl (local.get $c) (i32.const 4)) (local.get $d))))

  ;; JSON whitespace from $i on; the position of the first byte that is not.
  (func $ws (param $i i32) (result i32)
    (local $c i32)
    (block $done
      (loop $next
        (local.set $c (i32.load8_u (local.get $i)))
        (br_if $done (i32.gt_u (local.get $c) (i32.const 0x20)))
        (br_if $done (i32.eqz
          (i32.or (i32.or (i32.eq (local.get $c) (i32.const 0x20)) (i32.eq (local.get $c) (i32.const 0x0a)))
                  (i32.or (i32.eq (local.get $c) (i32.const 0x0d)) (i32.eq (local.get $c) (i32.const 0x09))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; Rows from $i (a row's `[`) while they are plain and there is room: the `Line` column's rows
  ;; from $lines (below $linesEnd), the `tsNs` column's from $times (below $timesEnd), each row's
  ;; line text from $text (below $textEnd) and where it ends from $rows (below $rowsEnd), rows after
  ;; the first preceded by a comma. Answers 0 when the values' closing bracket was read (stopped
  ;; past it), else 1 (the first row not taken). `$commit` says where it stopped and how far each
  ;; region holds whole rows.
  (func (export "rows")
    (param $i i32)
    (param $lines i32) (param $linesEnd i32)
    (param $times i32) (param $timesEnd i32)
    (param $text i32) (param $textEnd i32)
    (param $rows i32) (param $rowsEnd i32)
    (result i32)
    (local $c i32) (local $e i32) (local $q i32) (local $m i32) (local $code i32) (local $v v128)
    (local $first i32)
    (local.set $first (i32.const 1))
    (block $stop
      (loop $row
        (call $commit (local.get $i) (local.get $lines) (local.get $times) (local.get $rows))
        (br_if $stop (i32.ge_u (local.get $rows) (local.get $rowsEnd)))
        (br_if $stop (i32.ge_u (local.get $times) (local.get $timesEnd)))
        (br_if $stop (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5b)))
        (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
        (br_if $stop (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)))
        (if (i32.eqz (local.get $first))
          (then
            (i32.store8 (local.get $lines) (i32.const 0x2c))
            (local.set $lines (i32.add (local.get $lines) (i32.const 1)))
            (i32.store8 (local.get $times) (i32.const 0x2c))
            (local.set $times (i32.add (local.get $times) (i32.const 1)))))

        ;; The time: a quote, 1 to 19 digits, a quote; copied with its quotes.
        (local.set $q (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (block $digits
          (loop $digit
            (local.set $c (i32.load8_u (local.get $i)))
            (br_if $digits (i32.gt_u (i32.sub (local.get $c) (i32.const 0x30)) (i32.const 9)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $digit)))
        (br_if $stop (i32.ne (local.get $c) (i32.const 0x22)))
        ;; digits - 1 = $i - $q - 2, in 0 to 18
        (br_if $stop (i32.gt_u (i32.sub (i32.sub (local.get $i) (local.get $q)) (i32.const 2)) (i32.const 18)))
        (v128.store (local.get $times) (v128.load (local.get $q)))
        (v128.store offset=16 (local.get $times) (v128.load offset=16 (local.get $q)))
        (local.set $times (i32.add (local.get $times) (i32.sub (i32.add (local.get $i) (i32.const 1)) (local.get $q))))

        (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
        (br_if $stop (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x2c)))
        (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
        (br_if $stop (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x22)))

        ;; The line: 16 bytes at a time copied to both the column and the text, up to the first
        ;; byte that needs a look (a quote, a backslash, `<`, `>`, `&`, below 0x20 or above 0x7f).
        (i32.store8 (local.get $lines) (i32.const 0x22))
        (local.set $lines (i32.add (local.get $lines) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (block $lineEnd
          (loop $chunk
            (br_if $stop (i32.ge_u (local.get $lines) (local.get $linesEnd)))
            (br_if $stop (i32.ge_u (local.get $text) (local.get $textEnd)))
            (local.set $v (v128.load (local.get $i)))
            (v128.store (local.get $lines) (local.get $v))
            (v128.store (local.get $text) (local.get $v))
            (local.set $m (i8x16.bitmask
              (v128.or
                (v128.or
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x22)))
                  (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x5c))))
                (v128.or
                  ;; signed: below 0x20, and above 0x7f
                  (i8x16.lt_s (local.get $v) (i8x16.splat (i32.const 0x20)))
                  (v128.or
                    ;; `<` and `>`: 0x3c and 0x3e, and only they, are 0x3e with bit 1 set
                    (i8x16.eq (v128.or (local.get $v) (i8x16.splat (i32.const 0x02))) (i8x16.splat (i32.const 0x3e)))
                    (i8x16.eq (local.get $v) (i8x16.splat (i32.const 0x26))))))))
            (if (i32.eqz (local.get $m))
              (then
                (local.set $i (i32.add (local.get $i) (i32.const 16)))
                (local.set $lines (i32.add (local.get $lines) (i32.const 16)))
                (local.set $text (i32.add (local.get $text) (i32.const 16)))
                (br $chunk)))
            (local.set $m (i32.ctz (local.get $m)))
            (local.set $i (i32.add (local.get $i) (local.get $m)))
            (local.set $lines (i32.add (local.get $lines) (local.get $m)))
            (local.set $text (i32.add (local.get $text) (local.get $m)))
            (local.set $c (i32.load8_u (local.get $i)))
            (br_if $lineEnd (i32.eq (local.get $c) (i32.const 0x22)))
            (if (i32.eq (local.get $c) (i32.const 0x5c))
              (then
                (local.set $e (i32.load8_u offset=1 (local.get $i)))
                (local.set $code (i32.load8_u (local.get $e)))
                (if (local.get $code)
                  (then
                    ;; A short escape: copied, its character in the text.
                    (i32.store16 (local.get $lines) (i32.or (i32.const 0x5c) (i32.shl (local.get $e) (i32.const 8))))
                    (i32.store8 (local.get $text) (local.get $code))
                    (local.set $i (i32.add (local.get $i) (i32.const 2)))
                    (local.set $lines (i32.add (local.get $lines) (i32.const 2)))
                    (local.set $text (i32.add (local.get $text) (i32.const 1)))
                    (br $chunk)))
                (br_if $stop (i32.ne (local.get $e) (i32.const 0x75)))
                ;; `\u` and four lowercase hex digits: copied when the SDK writes it so.
                (local.set $code (call $hex4 (i32.add (local.get $i) (i32.const 2))))
                (br_if $stop (i32.lt_s (local.get $code) (i32.const 0)))
                (if (i32.or (i32.eq (local.get $code) (i32.const 0x2028)) (i32.eq (local.get $code) (i32.const 0x2029)))
                  (then
                    (i32.store16 (local.get $text) (i32.const 0x80e2))
                    (i32.store8 offset=2 (local.get $text) (i32.or (i32.const 0xa0) (i32.and (local.get $code) (i32.const 0x0f))))
                    (local.set $text (i32.add (local.get $text) (i32.const 3))))
                  (else
                    ;; The controls without a short escape, `<`, `>` and `&`.
                    (br_if $stop
                      (i32.eqz
                        (i32.or
                          (i32.and
                            (i32.lt_u (local.get $code) (i32.const 0x20))
                            (i32.eqz (i32.and (i32.shr_u (i32.const 0x3700) (local.get $code)) (i32.const 1))))
                          (i32.or
                            (i32.eq (i32.or (local.get $code) (i32.const 0x02)) (i32.const 0x3e))
                            (i32.eq (local.get $code) (i32.const 0x26))))))
                    (i32.store8 (local.get $text) (local.get $code))
                    (local.set $text (i32.add (local.get $text) (i32.const 1)))))
                (i32.store (local.get $lines) (i32.load (local.get $i)))
                (i32.store16 offset=4 (local.get $lines) (i32.load16_u offset=4 (local.get $i)))
                (local.set $i (i32.add (local.get $i) (i32.const 6)))
                (local.set $lines (i32.add (local.get $lines) (i32.const 6)))
                (br $chunk)))
            ;; Below 0x20 or above 0x7f: the caller's.
            (br_if $stop (i32.eqz
              (i32.or (i32.eq (i32.or (local.get $c) (i32.const 0x02)) (i32.const 0x3e)) (i32.eq (local.get $c) (i32.const 0x26)))))
            ;; `<`, `>`, `&`: written `\u003c`, `\u003e`, `\u0026`, as the SDK escapes them.
            (i32.store (local.get $lines) (i32.const 0x3030755c))
            (i32.store16 offset=4 (local.get $lines)
              (select (i32.const 0x3632)
                (select (i32.const 0x6333) (i32.const 0x6533) (i32.eq (local.get $c) (i32.const 0x3c)))
                (i32.eq (local.get $c) (i32.const 0x26))))
            (i32.store8 (local.get $text) (local.get $c))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (local.set $lines (i32.add (local.get $lines) (i32.const 6)))
            (local.set $text (i32.add (local.get $text) (i32.const 1)))
            (br $chunk)))
        (i32.store8 (local.get $lines) (i32.const 0x22))
        (local.set $lines (i32.add (local.get $lines) (i32.const 1)))

        (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
        (br_if $stop (i32.ne (i32.load8_u (local.get $i)) (i32.const 0x5d)))
        (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
        (i32.store (local.get $rows) (local.get $text))
        (local.set $rows (i32.add (local.get $rows) (i32.const 4)))
        (local.set $first (i32.const 0))
        (local.set $c (i32.load8_u (local.get $i)))
        (if (i32.eq (local.get $c) (i32.const 0x2c))
          (then
            (local.set $i (call $ws (i32.add (local.get $i) (i32.const 1))))
            (br $row)))
        ;; The row is whole: what follows it is the caller's to read.
        (call $commit (local.get $i) (local.get $lines) (local.get $times) (local.get $rows))
        (return (i32.ne (local.get $c) (i32.const 0x5d)))))
    (i32.const 1))

  ;; 32-bit FNV-1 of each of $n texts, the k-th from where the (k-1)-th ends ($text for the first)
  ;; to the end $ends holds for it, into $hashes: four at a time, their multiplications interleaved.
  (func (export "hashes") (param $ends i32) (param $n i32) (param $text i32) (param $hashes i32)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $e0 i32) (local $e1 i32) (local $e2 i32) (local $e3 i32)
    (local $h0 i32) (local $h1 i32) (local $h2 i32) (local $h3 i32)
    (local $m i32) (local $j i32) (local $last i32)
    (local.set $last (i32.add (local.get $ends) (i32.shl (local.get $n) (i32.const 2))))
    (block $fours
      (loop $four
        (br_if $fours (i32.gt_u (i32.add (local.get $ends) (i32.const 16)) (local.get $last)))
        (local.set $s0 (local.get $text))
        (local.set $e0 (i32.load (local.get $ends)))
        (local.set $s1 (local.get $e0))
        (local.set $e1 (i32.load offset=4 (local.get $ends)))
        (local.set $s2 (local.get $e1))
        (local.set $e2 (i32.load offset=8 (local.get $ends)))
        (local.set $s3 (local.get $e2))
        (local.set $e3 (i32.load offset=12 (local.get $ends)))
        (local.set $text (local.get $e3))
        (local.set $h0 (i32.const 0x811c9dc5))
        (local.set $h1 (i32.const 0x811c9dc5))
        (local.set $h2 (i32.const 0x811c9dc5))
        (local.set $h3 (i32.const 0x811c9dc5))
        ;; The length all four have.
        (local.set $m (i32.sub (local.get $e0) (local.get $s0)))
        (local.set $j (i32.sub (local.get $e1) (local.get $s1)))
        (local.set $m (select (local.get $j) (local.get $m) (i32.lt_u (local.get $j) (local.get $m))))
        (local.set $j (i32.sub (local.get $e2) (local.get $s2)))
        (local.set $m (select (local.get $j) (local.get $m) (i32.lt_u (local.get $j) (local.get $m))))
        (local.set $j (i32.sub (local.get $e3) (local.get $s3)))
        (local.set $m (select (local.get $j) (local.get $m) (i32.lt_u (local.get $j) (local.get $m))))
        (local.set $m (i32.add (local.get $s0) (local.get $m)))
        (block $common
          (loop $byte
            (br_if $common (i32.ge_u (local.get $s0) (local.get $m)))
            (local.set $h0 (i32.xor (i32.mul (local.get $h0) (i32.const 0x01000193)) (i32.load8_u (local.get $s0))))
            (local.set $h1 (i32.xor (i32.mul (local.get $h1) (i32.const 0x01000193)) (i32.load8_u (local.get $s1))))
            (local.set $h2 (i32.xor (i32.mul (local.get $h2) (i32.const 0x01000193)) (i32.load8_u (local.get $s2))))
            (local.set $h3 (i32.xor (i32.mul (local.get $h3) (i32.const 0x01000193)) (i32.load8_u (local.get $s3))))
            (local.set $s0 (i32.add (local.get $s0) (i32.const 1)))
            (local.set $s1 (i32.add (local.get $s1) (i32.const 1)))
            (local.set $s2 (i32.add (local.get $s2) (i32.const 1)))
            (local.set $s3 (i32.add (local.get $s3) (i32.const 1)))
            (br $byte)))
        (i32.store (local.get $hashes) (call $fnv (local.get $h0) (local.get $s0) (local.get $e0)))
        (i32.store offset=4 (local.get $hashes) (call $fnv (local.get $h1) (local.get $s1) (local.get $e1)))
        (i32.store offset=8 (local.get $hashes) (call $fnv (local.get $h2) (local.get $s2) (local.get $e2)))
        (i32.store offset=12 (local.get $hashes) (call $fnv (local.get $h3) (local.get $s3) (local.get $e3)))
        (local.set $ends (i32.add (local.get $ends) (i32.const 16)))
        (local.set $hashes (i32.add (local.get $hashes) (i32.const 16)))
        (br $four)))
    (block $done
      (loop $one
        (br_if $done (i32.ge_u (local.get $ends) (local.get $last)))
        (local.set $e0 (i32.load (local.get $ends)))
        (i32.store (local.get $hashes) (call $fnv (i32.const 0x811c9dc5) (local.get $text) (local.get $e0)))
        (local.set $text (local.get $e0))
        (local.set $ends (i32.add (local.get $ends) (i32.const 4)))
        (local.set $hashes (i32.add (local.get $hashes) (i32.const 4)))
        (br $one))))

  ;; FNV-1 continued from $h over the bytes $s to $e.
  (func $fnv (param $h i32) (param $s i32) (param $e i32) (result i32)
    (block $done
      (loop $byte
        (br_if $done (i32.ge_u (local.get $s) (local.get $e)))
        (local.set $h (i32.xor (i32.mul (local.get $h) (i32.const 0x01000193)) (i32.load8_u (local.get $s))))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $byte)))
    (local.get $h)))
