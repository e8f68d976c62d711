package org.jiwarp.cli;

import java.util.Map;
import org.jiwarp.capture.decode.CaptureDecode;
import org.jiwarp.capture.decode.DecodedPdu;

/** A small hand-written JSON rendering of a decode, so the CLI needs no JSON library. */
final class DecodeJson {

    private DecodeJson() {
    }

    static String toJson(CaptureDecode decode) {
        StringBuilder json = new StringBuilder("[");
        boolean first = true;
        for (DecodedPdu pdu : decode.pdus()) {
            json.append(first ? "\n  " : ",\n  ").append(toJson(pdu));
            first = false;
        }
        return json.append(first ? "]" : "\n]").toString();
    }

    /** One PDU as a JSON object on one line. */
    static String toJson(DecodedPdu pdu) {
        StringBuilder json = new StringBuilder("{");
        json.append("\"frame\": ").append(pdu.frameNumber());
        json.append(", \"conversation\": ").append(pdu.conversation());
        json.append(", \"source\": ").append(string(pdu.source()));
        json.append(", \"destination\": ").append(string(pdu.destination()));
        json.append(", \"kind\": ").append(string(pdu.kind().name()));
        json.append(", \"summary\": ").append(string(pdu.summary()));
        json.append(", \"crc\": ").append(pdu.crcGood() == null ? "null" : string(pdu.crcGood() ? "good" : "bad"));
        if (pdu.terminateError() != null) {
            json.append(", \"terminate\": {\"layer\": ").append(string(pdu.terminateError().layer().name()))
                    .append(", \"errorType\": ").append(string(pdu.terminateError().errorTypeName()))
                    .append(", \"error\": ").append(string(pdu.terminateError().rfcName()))
                    .append(", \"name\": ").append(string(pdu.terminateError().name())).append('}');
        }
        json.append(", \"problems\": [");
        for (int i = 0; i < pdu.problems().size(); i++) {
            json.append(i == 0 ? "" : ", ").append(string(pdu.problems().get(i)));
        }
        json.append("], \"fields\": {");
        boolean firstField = true;
        for (Map.Entry<String, String> field : pdu.fields().entrySet()) {
            json.append(firstField ? "" : ", ").append(string(field.getKey())).append(": ")
                    .append(string(field.getValue()));
            firstField = false;
        }
        json.append("}}");
        return json.toString();
    }

    static String string(String value) {
        StringBuilder out = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        return out.append('"').toString();
    }
}
