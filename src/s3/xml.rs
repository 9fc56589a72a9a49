//! The few XML answers S3 gives that the client reads: a listing page, a new upload's id, an
//! error's code and message. Elements are found by local name, so a namespace or its absence
//! changes nothing.

use roxmltree::{Document, Node};

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The full key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
}

/// A page of ListObjectsV2.
#[derive(Debug, Default)]
pub struct Page {
    /// The objects on it.
    pub objects: Vec<Listed>,
    /// The token for the next page, when the listing is truncated.
    pub next: Option<String>,
}

fn child<'a>(node: Node<'a, 'a>, name: &str) -> Option<Node<'a, 'a>> {
    node.children().find(|c| c.is_element() && c.tag_name().name() == name)
}

fn text_of(node: Node, name: &str) -> Option<String> {
    child(node, name).map(|c| c.text().unwrap_or("").to_string())
}

/// Reads a ListObjectsV2 page.
pub fn list_page(body: &str) -> Result<Page, String> {
    let doc = Document::parse(body).map_err(|e| format!("listing is not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "ListBucketResult" {
        return Err(format!("listing's root is <{}>, not <ListBucketResult>", root.tag_name().name()));
    }
    let mut page = Page::default();
    for c in root.children().filter(|c| c.is_element() && c.tag_name().name() == "Contents") {
        let key = text_of(c, "Key").ok_or("a listed object has no <Key>")?;
        let size =
            text_of(c, "Size").and_then(|s| s.trim().parse().ok()).ok_or("a listed object has no numeric <Size>")?;
        page.objects.push(Listed { key, size });
    }
    if text_of(root, "IsTruncated").is_some_and(|t| t.trim() == "true") {
        let next = text_of(root, "NextContinuationToken").filter(|t| !t.is_empty());
        page.next = Some(next.ok_or("a truncated listing has no <NextContinuationToken>")?);
    }
    Ok(page)
}

/// A multipart upload not yet completed nor aborted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Open {
    /// The key it uploads to.
    pub key: String,
    /// Its upload id.
    pub id: String,
}

/// The key and upload id markers of a next page of ListMultipartUploads.
pub type Markers = (String, String);

/// A page of ListMultipartUploads: the uploads, and the markers of the next page when
/// truncated.
pub fn uploads_page(body: &str) -> Result<(Vec<Open>, Option<Markers>), String> {
    let doc = Document::parse(body).map_err(|e| format!("upload listing is not XML: {e}"))?;
    let root = doc.root_element();
    if root.tag_name().name() != "ListMultipartUploadsResult" {
        return Err(format!("upload listing's root is <{}>", root.tag_name().name()));
    }
    let mut open = Vec::new();
    for u in root.children().filter(|c| c.is_element() && c.tag_name().name() == "Upload") {
        let key = text_of(u, "Key").ok_or("a listed upload has no <Key>")?;
        let id = text_of(u, "UploadId").filter(|i| !i.is_empty()).ok_or("a listed upload has no <UploadId>")?;
        open.push(Open { key, id });
    }
    let next = match text_of(root, "IsTruncated").is_some_and(|t| t.trim() == "true") {
        true => Some((
            text_of(root, "NextKeyMarker").unwrap_or_default(),
            text_of(root, "NextUploadIdMarker").unwrap_or_default(),
        )),
        false => None,
    };
    Ok((open, next))
}

/// The `UploadId` of an InitiateMultipartUploadResult.
pub fn upload_id(body: &str) -> Result<String, String> {
    let doc = Document::parse(body).map_err(|e| format!("answer is not XML: {e}"))?;
    text_of(doc.root_element(), "UploadId")
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "no <UploadId> in the answer".into())
}

/// The code and message of an `<Error>` document, when the body is one.
pub fn error(body: &str) -> Option<(String, String)> {
    let doc = Document::parse(body).ok()?;
    let root = doc.root_element();
    (root.tag_name().name() == "Error")
        .then(|| (text_of(root, "Code").unwrap_or_default(), text_of(root, "Message").unwrap_or_default()))
}

/// Escapes text for an XML element's content.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncated_page_gives_its_objects_and_the_next_token() {
        let body = r#"<?xml version="1.0"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <IsTruncated>true</IsTruncated><Contents><Key>p/a&amp;b</Key><Size>5</Size></Contents>
            <Contents><Key>p/c</Key><Size>0</Size></Contents><NextContinuationToken>t1</NextContinuationToken></ListBucketResult>"#;
        let page = list_page(body).unwrap();
        assert_eq!(page.objects, vec![Listed { key: "p/a&b".into(), size: 5 }, Listed { key: "p/c".into(), size: 0 }]);
        assert_eq!(page.next.as_deref(), Some("t1"));
        assert!(list_page("<Error/>").is_err());
        assert_eq!(
            error("<Error><Code>SlowDown</Code><Message>Reduce</Message></Error>"),
            Some(("SlowDown".into(), "Reduce".into()))
        );
        assert_eq!(error("not xml"), None);
    }

    #[test]
    fn an_upload_listing_gives_each_key_and_id_and_the_markers_of_the_next_page() {
        let body = r#"<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <IsTruncated>true</IsTruncated><NextKeyMarker>p/b</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>
            <Upload><Key>p/a</Key><UploadId>u1</UploadId></Upload><Upload><Key>p/b</Key><UploadId>u2</UploadId></Upload>
            </ListMultipartUploadsResult>"#;
        let (open, next) = uploads_page(body).unwrap();
        assert_eq!(
            open,
            vec![Open { key: "p/a".into(), id: "u1".into() }, Open { key: "p/b".into(), id: "u2".into() }]
        );
        assert_eq!(next, Some(("p/b".into(), "u2".into())));
        assert!(uploads_page("<ListBucketResult/>").is_err());
    }
}
