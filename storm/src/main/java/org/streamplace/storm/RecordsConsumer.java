package org.streamplace.storm;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import org.apache.storm.metric.api.IMetricsConsumer;
import org.apache.storm.task.IErrorReporter;
import org.apache.storm.task.TopologyContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metrics consumer that gathers every worker's monitor windows in one place and forwards them
 * to a receiver over HTTP: the monitor's path off a multi-machine cluster without a shared
 * filesystem. Registered with the topology ({@code topology.metrics.consumer.register}: this class,
 * {@code parallelism.hint: 1}, {@code argument}: the receiver's URL, e.g. {@code
 * http://autopilot-host:7071/records}); the workers run {@link TrafficMonitor} with {@code
 * streamplace.monitor.via.metrics: true}.
 *
 * <p>Storm delivers each worker's windows ({@link WindowSink.Outbox}) on its {@code __metrics}
 * stream; this consumer adds the sending worker's host to each window and POSTs them, in order, as
 * JSON Lines from one sender thread, so a slow or absent receiver never blocks Storm's executor.
 * A batch the receiver does not answer with 2xx is sent again (backing off up to 10 s); windows
 * are kept meanwhile up to {@link #BUFFER_CHARS} characters, then the oldest are dropped and
 * counted. Every request carries that count ({@code X-Streamplace-Dropped}) and who counted it
 * ({@code X-Streamplace-Consumer}: the topology's id and this consumer's task), and the receiver
 * reports it, as it reports the workers' own drops. A batch the receiver refuses (4xx: it is
 * malformed) is not sent again; this log and the receiver's count say so.
 */
public class RecordsConsumer implements IMetricsConsumer {
    private static final Logger LOG = LoggerFactory.getLogger(RecordsConsumer.class);
    /**
     * What waits for the receiver at most: 64 Mi characters (a 1,000-task worker's window is
     * ~100 KB), and never more than a twentieth of the worker's heap, which user tasks share.
     */
    static final long BUFFER_CHARS = Math.min(64L << 20, Runtime.getRuntime().maxMemory() / 20);
    /** Windows per request at most, and characters per request at most (beyond one window). */
    static final int BATCH = 200;
    static final long BATCH_CHARS = 4L << 20;
    private static final long STOP_GRACE_MS = 3000;   // Storm force-kills a stopping worker after 3 s

    private final ArrayDeque<String> queue = new ArrayDeque<>();
    private long queuedChars;
    private long dropped;
    private long rejected;
    private volatile boolean stopping;
    private URI receiver;
    private String name;   // "topology id:task id": the receiver counts each consumer's drops apart
    private HttpClient client;
    private Thread sender;

    @Override
    public void prepare(Map<String, Object> conf, Object argument, TopologyContext context, IErrorReporter reporter) {
        start(receiverUri(argument), context.getStormId() + ":" + context.getThisTaskId());
    }

    /** Starts sending to {@code receiver} as {@code name} (the topology's id and this consumer's task). */
    void start(URI receiver, String name) {
        this.receiver = receiver;
        this.name = name;
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        sender = new Thread(this::send, "streamplace-records-consumer");
        sender.setDaemon(true);
        sender.start();
    }

    /** The receiver's URL from the registration's {@code argument}; an error naming it otherwise. */
    static URI receiverUri(Object argument) {
        String text = argument == null ? "" : String.valueOf(argument);
        try {
            URI uri = new URI(text);
            if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) && uri.getHost() != null) {
                return uri;
            }
        } catch (java.net.URISyntaxException e) {
            // reported below
        }
        throw new IllegalArgumentException("streamplace: " + RecordsConsumer.class.getName()
                                           + " needs its argument to be the receiver's http:// URL, got '" + text + "'");
    }

    @Override
    public void handleDataPoints(TaskInfo task, Collection<DataPoint> points) {
        for (DataPoint p : points) {
            if (TrafficMonitor.METRIC.equals(p.name) && p.value instanceof String windows) {
                for (String line : windows.split("\n")) {
                    if (line.startsWith("{")) {
                        offer("{\"host\":" + Json.write(task.srcWorkerHost) + "," + line.substring(1));
                    }
                }
            }
        }
    }

    private synchronized void offer(String window) {
        queue.addLast(window);
        queuedChars += window.length();
        while (queuedChars > BUFFER_CHARS && queue.size() > 1) {
            queuedChars -= queue.removeFirst().length();
            dropped++;
        }
        notifyAll();
    }

    /** Up to {@link #BATCH} windows off the queue, waiting up to a second for the first. */
    private synchronized List<String> take() throws InterruptedException {
        if (queue.isEmpty()) {
            wait(1000);
        }
        List<String> batch = new ArrayList<>();
        long chars = 0;
        while (!queue.isEmpty() && batch.size() < BATCH && (batch.isEmpty() || chars + queue.peekFirst().length() <= BATCH_CHARS)) {
            String w = queue.removeFirst();
            queuedChars -= w.length();
            chars += w.length();
            batch.add(w);
        }
        return batch;
    }

    private synchronized long dropped() {
        return dropped;
    }

    private void send() {
        long backoff = 500;
        List<String> batch = List.of();
        long giveUpAt = Long.MAX_VALUE;
        while (true) {
            try {
                if (batch.isEmpty()) {
                    if (stopping && queueEmpty()) {
                        return;
                    }
                    batch = take();
                    continue;
                }
                if (stopping && giveUpAt == Long.MAX_VALUE) {
                    giveUpAt = System.currentTimeMillis() + STOP_GRACE_MS;
                }
                int status = post(batch);
                if (status / 100 == 2) {
                    batch = List.of();
                    backoff = 500;
                } else if (status / 100 == 4) {
                    rejected += batch.size();
                    LOG.error("streamplace records: {} refused {} windows (HTTP {}); {} refused so far",
                              receiver, batch.size(), status, rejected);
                    batch = List.of();
                } else {
                    throw new java.io.IOException("HTTP " + status);
                }
            } catch (InterruptedException e) {
                stopping = true;
            } catch (RuntimeException e) {   // never let the sender die: windows would pile up unreported
                LOG.error("streamplace records: sending to {} failed; trying again", receiver, e);
                sleep(backoff);
                backoff = Math.min(10_000, backoff * 2);
            } catch (java.io.IOException e) {
                if (System.currentTimeMillis() > giveUpAt) {
                    LOG.error("streamplace records: stopping with {} windows not delivered to {}: {}",
                              batch.size() + queueSize(), receiver, e.toString());
                    return;
                }
                LOG.warn("streamplace records: cannot reach {} ({}); trying again in {} ms", receiver, e, backoff);
                sleep(backoff);
                backoff = Math.min(10_000, backoff * 2);
            }
        }
    }

    private int post(List<String> batch) throws java.io.IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(receiver)
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/x-ndjson")
            .header("X-Streamplace-Dropped", Long.toString(dropped()))
            .header("X-Streamplace-Consumer", name)
            .POST(HttpRequest.BodyPublishers.ofString(String.join("\n", batch) + "\n"))
            .build();
        return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private synchronized boolean queueEmpty() {
        return queue.isEmpty();
    }

    private synchronized int queueSize() {
        return queue.size();
    }

    private void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            stopping = true;
        }
    }

    @Override
    public void cleanup() {
        stopping = true;
        synchronized (this) {
            notifyAll();
        }
        try {
            if (sender != null) {
                sender.join(STOP_GRACE_MS + 1000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
