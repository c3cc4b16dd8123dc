// tests/compat/kafkajs_partition.js: kafkajs' own partitioners (the npm
// package, DefaultPartitioner and LegacyPartitioner), called directly
// with a topic's partition metadata and no broker, for
// tests/compat/partitioners.py. No chash code.
//
//   node kafkajs_partition.js NODE_MODULES < {"counts": [...], "keys": [hex...]}
// prints {"default": [[p per key] per count], "legacy": [...]}.
const path = require('path')
const { Partitioners } = require(path.resolve(process.argv[2], 'kafkajs'))

let input = ''
process.stdin.on('data', d => { input += d })
process.stdin.on('end', () => {
  const { counts, keys } = JSON.parse(input)
  const run = create => counts.map(n => {
    const partitioner = create()
    const partitionMetadata = Array.from({ length: n },
      (_, i) => ({ partitionId: i, leader: 0 }))
    return keys.map(hex => partitioner({
      topic: 'compat',
      partitionMetadata,
      message: { key: Buffer.from(hex, 'hex'), value: 'v' },
    }))
  })
  process.stdout.write(JSON.stringify({
    default: run(Partitioners.DefaultPartitioner),
    legacy: run(Partitioners.LegacyPartitioner),
  }))
})
