package org.streamplace.storm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ReceiverProgressTest {
    @Test
    void completeWhenEveryWorkerThatSentHasSentTheLastWindow() {
        assertTrue(ReceiverProgress.complete("3 3\n"));
        assertFalse(ReceiverProgress.complete("2 3"));
        assertFalse(ReceiverProgress.complete("0 0"));    // no worker has sent anything yet
        assertFalse(ReceiverProgress.complete("3"));
        assertFalse(ReceiverProgress.complete("x 3"));
    }

    /** A receiver that answers "1 2" twice, then "2 2": the wait ends at the third question, asked as the receiver expects. */
    @Test
    void waitsUntilTheReceiverHasEveryWorkersLastWindow() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        List<String> queries = Collections.synchronizedList(new ArrayList<>());
        HttpServer server = answering(asked, queries, 2);
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/records";
            long deadline = System.currentTimeMillis() + 10_000;
            assertTrue(ReceiverProgress.await(url, "topo-1-17", 40_500, deadline));
            assertEquals(3, asked.get());
            assertEquals("prefix=topo-1-17&through=40.500", queries.get(0));
        } finally {
            server.stop(0);
        }
    }

    @Test
    void givesUpAtTheDeadline() throws Exception {
        HttpServer server = answering(new AtomicInteger(), Collections.synchronizedList(new ArrayList<>()), Integer.MAX_VALUE);
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/records";
            long began = System.currentTimeMillis();
            assertFalse(ReceiverProgress.await(url, "topo-1-17", 40_500, began + 600));
            assertTrue(System.currentTimeMillis() - began >= 600);
        } finally {
            server.stop(0);
        }
    }

    private static HttpServer answering(AtomicInteger asked, List<String> queries, int incompleteAnswers) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/records", exchange -> {
            queries.add(exchange.getRequestURI().getRawQuery());
            byte[] body = (asked.incrementAndGet() <= incompleteAnswers ? "1 2" : "2 2").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        return server;
    }
}
