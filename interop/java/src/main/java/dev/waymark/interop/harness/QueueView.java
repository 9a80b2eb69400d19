package dev.waymark.interop.harness;

/** One QueueData entry of a topic route. */
public record QueueView(String brokerName, int readQueueNums, int writeQueueNums, int perm, int topicSysFlag) {
    public boolean writable() {
        return (perm & 2) != 0;
    }
}
