package dev.waymark.interop.scenario;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import dev.waymark.interop.harness.EmbeddedBroker;

/**
 * Brokers closed all at once when the test ends: a broker's shutdown takes seconds (its
 * message store alone waits 3 s for its last flushes), which brokers closed one after another
 * would pay once each. {@link #inParallel} also serves waits that may each take seconds.
 */
final class BrokerFleet implements AutoCloseable {
    private final List<EmbeddedBroker> brokers = new ArrayList<>();

    EmbeddedBroker add(EmbeddedBroker broker) {
        brokers.add(broker);
        return broker;
    }

    @Override
    public void close() throws Exception {
        inParallel(brokers, EmbeddedBroker::close);
    }

    /** What {@link #inParallel} runs for each item. */
    @FunctionalInterface
    interface Action<T> {
        void run(T item) throws Exception;
    }

    /**
     * Runs {@code action} for every item at once, one thread each (the common pool has a
     * single thread on a two-core machine), and rethrows the first failure once all ended.
     */
    static <T> void inParallel(List<T> items, Action<T> action) throws Exception {
        if (items.isEmpty()) {
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(items.size());
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (T item : items) {
                runs.add(pool.submit(() -> {
                    action.run(item);
                    return null;
                }));
            }
            Throwable first = null;
            for (Future<?> run : runs) {
                try {
                    run.get();
                } catch (ExecutionException e) {
                    first = first == null ? e.getCause() : first;
                }
            }
            if (first instanceof Exception e) {
                throw e;
            }
            if (first instanceof Error e) {
                throw e;
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
