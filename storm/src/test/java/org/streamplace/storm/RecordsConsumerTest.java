package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.storm.metric.api.IMetricsConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The monitor's path through Storm's metrics: a worker's outbox, and the consumer that forwards it over HTTP. */
class RecordsConsumerTest {
    private HttpServer server;
    private final LinkedBlockingQueue<String> bodies = new LinkedBlockingQueue<>();
    private final LinkedBlockingQueue<String> dropHeaders = new LinkedBlockingQueue<>();
    private final AtomicInteger failFirst = new AtomicInteger();

    @BeforeEach
    void startReceiver() throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/records", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            if (failFirst.getAndDecrement() > 0) {
                exchange.sendResponseHeaders(503, -1);
            } else {
                dropHeaders.add(exchange.getRequestHeaders().getFirst("X-Streamplace-Consumer") + " "
                                + exchange.getRequestHeaders().getFirst("X-Streamplace-Dropped"));   // first: the test waits on bodies
                bodies.add(new String(body, StandardCharsets.UTF_8));
                exchange.sendResponseHeaders(204, -1);
            }
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stopReceiver() {
        server.stop(0);
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/records";
    }

    @Test
    void anOutboxHandsEachWindowOnceAsOneLine() {
        WindowSink.Outbox outbox = new WindowSink.Outbox("topo-1-6700-42");
        assertNull(outbox.drain());
        outbox.accept(10_000, "{\"t\":1}\n", "{\"l\":1}\n", "");
        outbox.accept(20_000, "", "{\"l\":2}\n", "");
        String[] lines = outbox.metric().getValueAndReset().toString().split("\n");
        assertEquals(2, lines.length);
        assertEquals("{\"worker\":\"topo-1-6700-42\",\"window_start\":10.000,\"traffic\":\"{\\\"t\\\":1}\\n\","
                     + "\"load\":\"{\\\"l\\\":1}\\n\",\"latency\":\"\",\"dropped\":0}", lines[0]);
        assertTrue(lines[1].contains("\"window_start\":20.000"));
        assertNull(outbox.drain());   // taken once
        // the data point travels between workers with these dimensions: Storm's Kryo must know their class
        assertEquals(java.util.HashMap.class, outbox.metric().getDimensions().getClass());
    }

    @Test
    void aFullOutboxDropsItsOldestWindowsAndSaysHowMany() {
        WindowSink.Outbox outbox = new WindowSink.Outbox("w");
        for (int i = 0; i < WindowSink.Outbox.CAPACITY + 3; i++) {
            outbox.accept(i * 1000L, "", "", "");
        }
        String[] lines = outbox.drain().split("\n");
        assertEquals(WindowSink.Outbox.CAPACITY, lines.length);
        assertTrue(lines[0].contains("\"window_start\":3.000"), lines[0]);
        assertTrue(lines[lines.length - 1].endsWith("\"dropped\":3}"), lines[lines.length - 1]);
    }

    @Test
    void theConsumerForwardsEachWindowWithItsWorkersHost() throws Exception {
        RecordsConsumer consumer = new RecordsConsumer();
        consumer.start(RecordsConsumer.receiverUri(url()), "topo-1-1795000000:7");
        try {
            WindowSink.Outbox outbox = new WindowSink.Outbox("topo-1-6700-42");
            outbox.accept(10_000, "", "{\"l\":1}\n", "");
            IMetricsConsumer.TaskInfo from = new IMetricsConsumer.TaskInfo("node-a", 6700, "split", 3, 0, 1);
            consumer.handleDataPoints(from, List.of(new IMetricsConsumer.DataPoint("other-metric", 5),
                                                    new IMetricsConsumer.DataPoint(TrafficMonitor.METRIC, outbox.drain())));
            String body = bodies.poll(10, TimeUnit.SECONDS);
            assertTrue(body != null && body.startsWith("{\"host\":\"node-a\",\"worker\":\"topo-1-6700-42\",\"window_start\":10.000"), body);
            assertEquals(1, body.strip().split("\n").length);   // the other metric is not forwarded
            assertEquals("topo-1-1795000000:7 0", dropHeaders.poll());   // who counted, and its drops
        } finally {
            consumer.cleanup();
        }
    }

    @Test
    void aBatchTheReceiverDidNotTakeIsSentAgain() throws Exception {
        failFirst.set(2);
        RecordsConsumer consumer = new RecordsConsumer();
        consumer.start(RecordsConsumer.receiverUri(url()), "topo-1-1795000000:7");
        try {
            IMetricsConsumer.TaskInfo from = new IMetricsConsumer.TaskInfo("node-b", 6701, "count", 4, 0, 1);
            consumer.handleDataPoints(from, List.of(new IMetricsConsumer.DataPoint(TrafficMonitor.METRIC,
                "{\"worker\":\"w\",\"window_start\":1.000,\"traffic\":\"\",\"load\":\"\",\"latency\":\"\",\"dropped\":0}")));
            String body = bodies.poll(15, TimeUnit.SECONDS);   // after two refusals, backing off 0.5 s then 1 s
            assertTrue(body != null && body.contains("\"host\":\"node-b\""), body);
            assertNull(bodies.poll(1, TimeUnit.SECONDS));   // delivered once
        } finally {
            consumer.cleanup();
        }
    }

    @Test
    void theArgumentMustBeTheReceiversUrl() {
        assertEquals("127.0.0.1", RecordsConsumer.receiverUri("http://127.0.0.1:1/records").getHost());
        for (Object bad : new Object[] {null, "", "ftp://host/x", "not a url", "http:///records"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordsConsumer.receiverUri(bad));
            assertTrue(e.getMessage().contains("receiver's http:// URL"), e.getMessage());
        }
    }
}
