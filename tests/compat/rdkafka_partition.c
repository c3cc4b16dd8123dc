/*
** tests/compat/rdkafka_partition.c: librdkafka's own murmur2 partitioner
** (rd_kafka_msg_partitioner_murmur2, Debian's librdkafka-dev), called with
** a NULL topic (it reads only the key and the partition count), for
** tests/compat/partitioners.py. No chash code.
**
** stdin: a first line of partition counts, then one hex key a line ("-"
** for the empty key). stdout: one line a key, its partition per count.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <librdkafka/rdkafka.h>

int main(void){
  static char line[1<<16];
  static unsigned char key[1<<15];
  int32_t counts[64];
  int nCount = 0;
  if( !fgets(line, sizeof(line), stdin) ) return 1;
  for(char *t=strtok(line, " \n"); t && nCount<64; t=strtok(NULL, " \n")){
    counts[nCount++] = (int32_t)atoi(t);
  }
  while( fgets(line, sizeof(line), stdin) ){
    size_t n = 0;
    for(const char *p=line; p[0] && p[0]!='\n' && p[0]!='-' && p[1]; p+=2){
      unsigned b;
      if( sscanf(p, "%2x", &b)!=1 ) return 1;
      key[n++] = (unsigned char)b;
    }
    for(int c=0; c<nCount; c++){
      printf("%s%d", c ? " " : "",
             rd_kafka_msg_partitioner_murmur2(NULL, key, n, counts[c],
                                              NULL, NULL));
    }
    printf("\n");
  }
  return 0;
}
