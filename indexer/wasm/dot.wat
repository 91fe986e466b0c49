;; Dot products of one query vector with `rows` consecutive rows of `d` float32s each (d a multiple of 8), written as
;; float32s to `out`: the exact scan of the vector cache. Compiled to indexer/wasm/dot-wasm.ts by
;; `npx tsx scripts/build-dot-wasm.ts` (wabt); indexer/wasm/dot-scanner.test.ts fails when the two differ.
(module
  (import "env" "memory" (memory 1))
  (func (export "scores") (param $m i32) (param $rows i32) (param $d i32) (param $q i32) (param $out i32)
    (local $r i32) (local $j i32) (local $acc v128) (local $acc2 v128) (local $rowp i32) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $d) (i32.const 2)))
    (local.set $rowp (local.get $m))
    (block $done (loop $rowloop
      (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
      (local.set $acc (v128.const f32x4 0 0 0 0))
      (local.set $acc2 (v128.const f32x4 0 0 0 0))
      (local.set $j (i32.const 0))
      (block $dd (loop $dl
        (br_if $dd (i32.ge_u (local.get $j) (local.get $bytes)))
        (local.set $acc (f32x4.add (local.get $acc)
          (f32x4.mul (v128.load (i32.add (local.get $rowp) (local.get $j))) (v128.load (i32.add (local.get $q) (local.get $j))))))
        (local.set $acc2 (f32x4.add (local.get $acc2)
          (f32x4.mul (v128.load offset=16 (i32.add (local.get $rowp) (local.get $j))) (v128.load offset=16 (i32.add (local.get $q) (local.get $j))))))
        (local.set $j (i32.add (local.get $j) (i32.const 32)))
        (br $dl)))
      (local.set $acc (f32x4.add (local.get $acc) (local.get $acc2)))
      (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
        (f32.add (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
                 (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
      (local.set $rowp (i32.add (local.get $rowp) (local.get $bytes)))
      (local.set $r (i32.add (local.get $r) (i32.const 1)))
      (br $rowloop)))))
